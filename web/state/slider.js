// A field's slider (its schema's `slider`: [min, max, step], or [min, max, "log"]) as positions of
// an <input type=range> and the values they stand for. A log slider walks "nice" values, four a
// doubling (1..8, then 10 12 14 16 20 24 28 32 40 ...): slots from 1 to 4,096 in one slider, where
// a linear one would give 1..64 a sliver of its length (vLLM's default max_num_seqs is 256 or
// 1,024). A typed value off the stops puts the thumb at the nearest stop; the box keeps the value.

/** The nice values from min to max, four a doubling (integers only), both ends included. */
export function logStops(min, max) {
  const out = new Set([min]);
  for (let base = 1; base <= max; base *= 2) {
    for (const m of [1, 1.25, 1.5, 1.75]) {
      const v = base * m;
      if (Number.isInteger(v) && v >= min && v <= max) out.add(v);
    }
  }
  out.add(max);
  return [...out].sort((a, b) => a - b);
}

/** {min, max, step} for the range input, and value <-> position for this spec. */
export function sliderScale([min, max, step]) {
  if (step !== 'log') {
    return { min, max, step, toPos: (v) => v, toValue: (p) => Number(p), log: false };
  }
  const stops = logStops(min, max);
  const toPos = (v) => {
    if (!(v > stops[0])) return 0;
    let best = 0;
    for (let i = 1; i < stops.length; i++) {
      if (Math.abs(Math.log(v / stops[i])) < Math.abs(Math.log(v / stops[best]))) best = i;
    }
    return best;
  };
  return { min: 0, max: stops.length - 1, step: 1, toPos, toValue: (p) => stops[Number(p)], log: true };
}
