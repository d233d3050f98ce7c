/**
 * A 5×7 bitmap font for printable ASCII, embedded so that sandbox images are drawn the same on
 * every machine: no system fonts (a fresh machine may have none) and no font rendering library
 * whose output varies by version. The glyphs are the classic HD44780-style LCD font.
 *
 * Each glyph is five columns, left to right; in each column byte the lowest bit is the top row.
 */
const GLYPHS =
  '0000000000' + // space
  '00005f0000' + // !
  '0007000700' + // "
  '147f147f14' + // #
  '242a7f2a12' + // $
  '2313086462' + // %
  '3649552250' + // &
  '0005030000' + // '
  '001c224100' + // (
  '0041221c00' + // )
  '14083e0814' + // *
  '08083e0808' + // +
  '0050300000' + // ,
  '0808080808' + // -
  '0060600000' + // .
  '2010080402' + // /
  '3e5149453e' + // 0
  '00427f4000' + // 1
  '4261514946' + // 2
  '2141454b31' + // 3
  '1814127f10' + // 4
  '2745454539' + // 5
  '3c4a494930' + // 6
  '0171090503' + // 7
  '3649494936' + // 8
  '064949291e' + // 9
  '0036360000' + // :
  '0056360000' + // ;
  '0814224100' + // <
  '1414141414' + // =
  '0041221408' + // >
  '0201510906' + // ?
  '324979413e' + // @
  '7e1111117e' + // A
  '7f49494936' + // B
  '3e41414122' + // C
  '7f4141221c' + // D
  '7f49494941' + // E
  '7f09090901' + // F
  '3e4149497a' + // G
  '7f0808087f' + // H
  '00417f4100' + // I
  '2040413f01' + // J
  '7f08142241' + // K
  '7f40404040' + // L
  '7f020c027f' + // M
  '7f0408107f' + // N
  '3e4141413e' + // O
  '7f09090906' + // P
  '3e4151215e' + // Q
  '7f09192946' + // R
  '4649494931' + // S
  '01017f0101' + // T
  '3f4040403f' + // U
  '1f2040201f' + // V
  '3f4038403f' + // W
  '6314081463' + // X
  '0708700807' + // Y
  '6151494543' + // Z
  '007f414100' + // [
  '0204081020' + // backslash
  '0041417f00' + // ]
  '0402010204' + // ^
  '4040404040' + // _
  '0001020400' + // `
  '2054545478' + // a
  '7f48444438' + // b
  '3844444420' + // c
  '384444487f' + // d
  '3854545418' + // e
  '087e090102' + // f
  '0c5252523e' + // g
  '7f08040478' + // h
  '00447d4000' + // i
  '2040443d00' + // j
  '7f10284400' + // k
  '00417f4000' + // l
  '7c04180478' + // m
  '7c08040478' + // n
  '3844444438' + // o
  '7c14141408' + // p
  '081414187c' + // q
  '7c08040408' + // r
  '4854545420' + // s
  '043f444020' + // t
  '3c4040207c' + // u
  '1c2040201c' + // v
  '3c4030403c' + // w
  '4428102844' + // x
  '0c5050503c' + // y
  '4464544c44' + // z
  '0008364100' + // {
  '00007f0000' + // |
  '0041360800' + // }
  '0804081008'; // ~

export const GLYPH_WIDTH = 5;
export const GLYPH_HEIGHT = 7;
/** Horizontal advance per character, in font pixels (one blank column between glyphs). */
export const ADVANCE = GLYPH_WIDTH + 1;
/** Vertical advance per line, in font pixels (two blank rows between lines). */
export const LINE_HEIGHT = GLYPH_HEIGHT + 2;

/** Characters outside the font drawn as a look-alike, then '?' for anything else. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  '—': '-',
  '–': '-',
  '×': 'x',
  '’': "'",
  '‘': "'",
  '“': '"',
  '”': '"',
};

/** The five column bytes of a character's glyph. */
function glyphColumns(char: string): readonly number[] {
  const mapped = LOOK_ALIKES[char] ?? char;
  let code = mapped.length === 1 ? mapped.charCodeAt(0) : 0;
  if (code < 0x20 || code > 0x7e) code = 0x3f; // '?'
  const offset = (code - 0x20) * GLYPH_WIDTH * 2;
  return Array.from({ length: GLYPH_WIDTH }, (_, column) =>
    Number.parseInt(GLYPHS.slice(offset + column * 2, offset + column * 2 + 2), 16),
  );
}

/** Whether font pixel (column, row) of a character's glyph is ink. */
export function isInk(char: string, column: number, row: number): boolean {
  if (column < 0 || column >= GLYPH_WIDTH || row < 0 || row >= GLYPH_HEIGHT) return false;
  return (((glyphColumns(char)[column] as number) >> row) & 1) === 1;
}

/** An RGBA pixel buffer, row by row, 4 bytes a pixel. */
export interface RgbaCanvas {
  data: Buffer;
  width: number;
  height: number;
}

export type Rgba = readonly [number, number, number, number];

/**
 * Draws text into an RGBA buffer at (x, y), each font pixel a scale × scale square, clipped to
 * the buffer. Answers the width drawn, in image pixels.
 */
export function drawText(
  target: RgbaCanvas,
  text: string,
  x: number,
  y: number,
  scale: number,
  rgba: Rgba,
): number {
  const chars = Array.from(text);
  chars.forEach((char, index) => {
    const left = x + index * ADVANCE * scale;
    for (let column = 0; column < GLYPH_WIDTH; column++) {
      for (let row = 0; row < GLYPH_HEIGHT; row++) {
        if (!isInk(char, column, row)) continue;
        fillRect(target, left + column * scale, y + row * scale, scale, scale, rgba);
      }
    }
  });
  return chars.length * ADVANCE * scale;
}

export function fillRect(target: RgbaCanvas, x: number, y: number, w: number, h: number, rgba: Rgba): void {
  const x0 = Math.max(0, x);
  const y0 = Math.max(0, y);
  const x1 = Math.min(target.width, x + w);
  const y1 = Math.min(target.height, y + h);
  for (let py = y0; py < y1; py++) {
    for (let px = x0; px < x1; px++) {
      const at = (py * target.width + px) * 4;
      target.data[at] = rgba[0];
      target.data[at + 1] = rgba[1];
      target.data[at + 2] = rgba[2];
      target.data[at + 3] = rgba[3];
    }
  }
}
