// What every part of the page reads once the engine's schema, presets and story are in: the fields,
// the figures, the compared schedulers and the optional lanes, the default preset and the story's steps. The build's Node script
// makes the same one.

import { pageFields } from './schema.js';

/** The schedulers every view compares: the registry's `base` ones (schema().schedulers), in its
 *  order, [baseline, improved]. The page names no scheduler itself. */
export function baseSchedulers(schedulers) { return schedulers.filter((s) => s.base).map((s) => s.name); }

/** A scheduler's lane title (schema.schedulers' label), or its name. */
export function schedulerLabel(schedulers, name) { return schedulers.find((s) => s.name === name)?.label || name; }

export function makeContext(schema, presets, figures = Object.keys(schema.figures), story = []) {
  return {
    schema, presets, figures, story, fields: pageFields(schema),
    base: baseSchedulers(schema.schedulers),
    optional: schema.schedulers.filter((s) => !s.base && !s.lab).map((s) => s.name),   // the lab's lane: scheduler = custom
    challenges: (schema.figures.lab?.challenges || []).map((c) => c.name),
    // the planner's GPU budget (figures.plan): its default and largest, for the link's gpus=
    plan: schema.figures.plan ? { gpus: schema.figures.plan.gpus, max: schema.figures.plan.max_gpus } : null,
    defaultPreset: Object.keys(presets).find((k) => Object.keys(presets[k].scenario || {}).length === 0),
  };
}
