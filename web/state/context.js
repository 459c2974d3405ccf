// What every part of the page reads once the engine's schema, presets and story are in: the fields,
// the figures, the optional lanes, the default preset and the story's steps. The build's Node script
// makes the same one.

import { pageFields } from './schema.js';

export function makeContext(schema, presets, figures = Object.keys(schema.figures), story = []) {
  return {
    schema, presets, figures, story, fields: pageFields(schema),
    optional: schema.schedulers.filter((s) => !s.base).map((s) => s.name),
    defaultPreset: Object.keys(presets).find((k) => Object.keys(presets[k].scenario || {}).length === 0),
  };
}
