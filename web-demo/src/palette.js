// The map's colours, chosen for WCAG 2.2 SC 1.4.11 (non-text contrast: 3:1 against
// adjacent colours) and checked by test/palette.test.mjs with the WCAG formula.
//
// - Workloads: eight hues of similar, medium-dark lightness, so each one stands out
//   3:1 (in fact ≥ 3.9:1) from a free cell and from the white between cells; no red
//   (NoExecute) and no amber (what is lit up). Past eight workloads the colours repeat
//   with a white pattern (a dot, a ring, a bar), so 32 workloads have distinct marks;
//   the pattern is white on the colour, ≥ 4.3:1 against it.
// - Free cells: a pale fill with a border 3:1 against the white around it.
// - Lit up (blocking, or a fact's objects): amber with a dark edge, so the mark is
//   3:1 against white (the edge) and against the cells it surrounds (the amber).
// - Keyboard focus: blue (page) or black and white (map), never the amber above.

/** The colour between cells and domains. */
export const BACKGROUND = '#ffffff';
/** A free GPU. */
export const FREE = '#f1f4f1';
/** A free GPU's border: 4.1:1 against BACKGROUND (it was #b0b8b0, 2.0:1). */
export const FREE_BORDER = '#767f76';
/** Workload hues: blue, green, magenta, olive, purple, brown, teal, navy. */
export const WORKLOAD_COLOURS = ['#0072B2', '#007A4D', '#B03F88', '#7A6A00', '#6A4DA0', '#9A5B1E', '#008596', '#2C2C54'];
/** The marks drawn over a workload's colour, one per round of eight workloads. */
export const PATTERNS = ['solid', 'dot', 'ring', 'bar'];
/** The white of the patterns. */
export const PATTERN_INK = '#ffffff';
/** What is lit up (the minimal blocking set, a fact's objects). */
export const HIGHLIGHT = '#F9AB00';
/** Its edge: 3:1 against white and against HIGHLIGHT. */
export const HIGHLIGHT_EDGE = '#6B4000';
/** Keyboard focus on the page (CSS --focus). */
export const FOCUS = '#1A56C4';

/** The style of the `index`-th workload (in name order): a colour and a pattern. */
export function workloadStyle(index) {
  const n = WORKLOAD_COLOURS.length;
  const i = ((index % (n * PATTERNS.length)) + n * PATTERNS.length) % (n * PATTERNS.length);
  return { colour: WORKLOAD_COLOURS[i % n], pattern: PATTERNS[Math.floor(i / n)] };
}

/** WCAG 2.x relative luminance of `#rrggbb`. */
export function luminance(hex) {
  const n = parseInt(hex.replace('#', ''), 16);
  const lin = (v) => {
    const c = v / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin((n >> 16) & 255) + 0.7152 * lin((n >> 8) & 255) + 0.0722 * lin(n & 255);
}

/** WCAG contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a, b) {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * Fills a rectangle with a workload's style: its colour, then its pattern in white
 * (centred on the cell the rectangle belongs to, `size` wide; clipped to the rectangle,
 * so a shared GPU's segment shows the part of the mark it covers).
 */
export function fillStyle(ctx, style, x, y, w, h, cell = { x, y, size: Math.min(w, h) }) {
  ctx.fillStyle = style.colour;
  ctx.fillRect(x, y, w, h);
  if (style.pattern === 'solid') return;
  // A whole cell needs no clip (the marks lie inside it); a shared GPU's segment does.
  const whole = x === cell.x && y === cell.y && w === cell.size && h === cell.size;
  if (!whole) {
    ctx.save();
    ctx.beginPath();
    ctx.rect(x, y, w, h);
    ctx.clip();
  }
  const s = cell.size;
  const cx = cell.x + s / 2;
  const cy = cell.y + s / 2;
  ctx.fillStyle = PATTERN_INK;
  ctx.strokeStyle = PATTERN_INK;
  if (style.pattern === 'dot') {
    ctx.beginPath();
    ctx.arc(cx, cy, s * 0.19, 0, 2 * Math.PI);
    ctx.fill();
  } else if (style.pattern === 'ring') {
    ctx.lineWidth = s * 0.12;
    ctx.strokeRect(cell.x + s * 0.28, cell.y + s * 0.28, s * 0.44, s * 0.44);
  } else if (style.pattern === 'bar') {
    ctx.fillRect(cx - s * 0.09, cell.y + s * 0.15, s * 0.18, s * 0.7);
  }
  if (!whole) ctx.restore();
}
