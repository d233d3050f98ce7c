import type { RequestFields } from './request-fields.ts';

/**
 * `palette`: the colours reach the picture through the prompt, named as a text encoder knows
 * colours and followed by their hex codes, as the original service's own guidance for its palette
 * says ("you can include hex codes directly in the prompt"): `colour palette: forest green
 * (#228B22), gold (#FFD700)`. Each hex colour is named after the nearest colour of a table of the
 * common CSS colour names (nearest in CIELAB, where distances follow what the eye sees), so a
 * picker's `#2A8B25` reads as forest green. The contract already left out the `""` entries the
 * original's frontend pads its five slots with.
 */
export interface PaletteFields {
  readonly palette?: readonly string[] | null | undefined;
}

/** Common colour names and their sRGB values (CSS Color Module Level 4 named colours). */
const NAMED_COLOURS: readonly (readonly [string, number])[] = [
  ['black', 0x000000],
  ['dim grey', 0x696969],
  ['grey', 0x808080],
  ['dark grey', 0xa9a9a9],
  ['silver', 0xc0c0c0],
  ['light grey', 0xd3d3d3],
  ['white', 0xffffff],
  ['ivory', 0xfffff0],
  ['beige', 0xf5f5dc],
  ['wheat', 0xf5deb3],
  ['tan', 0xd2b48c],
  ['khaki', 0xf0e68c],
  ['dark khaki', 0xbdb76b],
  ['brown', 0xa52a2a],
  ['saddle brown', 0x8b4513],
  ['sienna', 0xa0522d],
  ['chocolate', 0xd2691e],
  ['peru', 0xcd853f],
  ['maroon', 0x800000],
  ['dark red', 0x8b0000],
  ['firebrick', 0xb22222],
  ['crimson', 0xdc143c],
  ['red', 0xff0000],
  ['tomato', 0xff6347],
  ['coral', 0xff7f50],
  ['salmon', 0xfa8072],
  ['light pink', 0xffb6c1],
  ['pink', 0xffc0cb],
  ['hot pink', 0xff69b4],
  ['deep pink', 0xff1493],
  ['orange red', 0xff4500],
  ['dark orange', 0xff8c00],
  ['orange', 0xffa500],
  ['gold', 0xffd700],
  ['yellow', 0xffff00],
  ['light yellow', 0xffffe0],
  ['olive', 0x808000],
  ['olive drab', 0x6b8e23],
  ['yellow green', 0x9acd32],
  ['lime green', 0x32cd32],
  ['lime', 0x00ff00],
  ['light green', 0x90ee90],
  ['green', 0x008000],
  ['forest green', 0x228b22],
  ['dark green', 0x006400],
  ['sea green', 0x2e8b57],
  ['medium sea green', 0x3cb371],
  ['spring green', 0x00ff7f],
  ['aquamarine', 0x7fffd4],
  ['teal', 0x008080],
  ['dark cyan', 0x008b8b],
  ['turquoise', 0x40e0d0],
  ['cyan', 0x00ffff],
  ['light cyan', 0xe0ffff],
  ['cadet blue', 0x5f9ea0],
  ['powder blue', 0xb0e0e6],
  ['light blue', 0xadd8e6],
  ['sky blue', 0x87ceeb],
  ['deep sky blue', 0x00bfff],
  ['dodger blue', 0x1e90ff],
  ['steel blue', 0x4682b4],
  ['cornflower blue', 0x6495ed],
  ['royal blue', 0x4169e1],
  ['blue', 0x0000ff],
  ['medium blue', 0x0000cd],
  ['dark blue', 0x00008b],
  ['navy', 0x000080],
  ['midnight blue', 0x191970],
  ['slate blue', 0x6a5acd],
  ['indigo', 0x4b0082],
  ['purple', 0x800080],
  ['dark violet', 0x9400d3],
  ['blue violet', 0x8a2be2],
  ['medium purple', 0x9370db],
  ['orchid', 0xda70d6],
  ['violet', 0xee82ee],
  ['plum', 0xdda0dd],
  ['lavender', 0xe6e6fa],
  ['thistle', 0xd8bfd8],
  ['magenta', 0xff00ff],
  ['medium violet red', 0xc71585],
  ['slate grey', 0x708090],
];

type Lab = readonly [number, number, number];

/** sRGB (0xRRGGBB) in CIELAB under D65. */
function lab(rgb: number): Lab {
  const linear = [16, 8, 0].map((shift) => {
    const c = ((rgb >> shift) & 0xff) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  const [r, g, b] = linear;
  const xyz = [
    (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
    0.2126 * r + 0.7152 * g + 0.0722 * b,
    (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
  ].map((t) => (t > 0.008856 ? Math.cbrt(t) : 7.787 * t + 16 / 116)) as [number, number, number];
  const [fx, fy, fz] = xyz;
  return [116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)];
}

const NAMED_LAB = NAMED_COLOURS.map(([name, rgb]) => ({ name, lab: lab(rgb) }));

/** `#RGB` or `#RRGGBB` (the contract's pattern) as 0xRRGGBB. */
function parseHex(hex: string): number {
  const digits = hex.replace(/^#/, '');
  const full = digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits;
  return Number.parseInt(full, 16);
}

/** The name of the common colour nearest to a hex colour. */
export function colourName(hex: string): string {
  const target = lab(parseHex(hex));
  let best = NAMED_LAB[0]!;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const named of NAMED_LAB) {
    const distance =
      (named.lab[0] - target[0]) ** 2 + (named.lab[1] - target[1]) ** 2 + (named.lab[2] - target[2]) ** 2;
    if (distance < bestDistance) {
      best = named;
      bestDistance = distance;
    }
  }
  return best.name;
}

/** The words a palette adds to the prompt (`colour palette: …`), or '' for none. */
export function paletteWords(fields: RequestFields<PaletteFields>): string {
  const colours = fields.list('palette');
  if (colours.length === 0) return '';
  return `colour palette: ${colours.map((hex) => `${colourName(hex)} (${hex.toUpperCase()})`).join(', ')}`;
}

/** A prompt with the palette's words after it. */
export function withPalette(prompt: string, fields: RequestFields<PaletteFields>): string {
  const words = paletteWords(fields);
  if (!words) return prompt;
  return prompt.trim() ? `${prompt.trim()}, ${words}` : words;
}
