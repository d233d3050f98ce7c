import { ADVANCE, drawText, fillRect, LINE_HEIGHT } from './bitmap-font.ts';

/** The first line of every sandbox image: nobody may mistake it for a model's output. */
export const SANDBOX_TITLE = 'SANDBOX OUTPUT — not a real model';
export const TITLE_RGBA = [255, 214, 0, 255] as const;
export const TEXT_RGBA = [255, 255, 255, 255] as const;
const BANNER_RGBA = [0, 0, 0, 215] as const;

export interface LabelLayout {
  /** Image pixels per font pixel for the body lines; the title is drawn at titleScale. */
  readonly scale: number;
  readonly titleScale: number;
  readonly margin: number;
  readonly lines: readonly string[];
  /** Height of the dark banner behind the text, from the top edge. */
  readonly bannerHeight: number;
}

/**
 * Where the label goes on a width × height image: the title, then the facts wrapped to the
 * width, as many lines as fit (the last one cut short with "..." if they do not all fit).
 */
export function layoutLabel(width: number, height: number, facts: readonly string[]): LabelLayout {
  const scale = Math.min(3, Math.max(1, Math.floor(width / 400)));
  const margin = 4 * scale;
  const fitsDouble = Array.from(SANDBOX_TITLE).length * ADVANCE * scale * 2 <= width - 2 * margin;
  const titleScale = fitsDouble ? scale * 2 : scale;
  const perLine = Math.max(1, Math.floor((width - 2 * margin) / (ADVANCE * scale)));
  const room = Math.max(
    0,
    Math.floor((height - 2 * margin - LINE_HEIGHT * titleScale) / (LINE_HEIGHT * scale)),
  );
  // Wrap one line past the room at most: enough to know the text goes on, and a prompt of a
  // megabyte costs what the few lines drawn cost, not a pass per line over the rest of it.
  const wrapped: string[] = [];
  for (const fact of facts) {
    if (wrapped.length > room) break;
    wrapped.push(...wrap(fact, perLine, room + 1 - wrapped.length));
  }
  const lines = wrapped.length <= room ? wrapped : wrapped.slice(0, room);
  if (lines.length < wrapped.length && lines.length > 0) {
    const last = lines.length - 1;
    lines[last] = `${(lines[last] as string).slice(0, Math.max(0, perLine - 3))}...`;
  }
  const bannerHeight = Math.min(
    height,
    2 * margin + LINE_HEIGHT * titleScale + lines.length * LINE_HEIGHT * scale,
  );
  return { scale, titleScale, margin, lines, bannerHeight };
}

/** The label as an RGBA overlay of the whole image: banner, title, facts and a yellow frame. */
export function drawLabel(width: number, height: number, layout: LabelLayout): Buffer {
  const overlay = { data: Buffer.alloc(width * height * 4), width, height };
  fillRect(overlay, 0, 0, width, layout.bannerHeight, BANNER_RGBA);
  const { margin, scale, titleScale } = layout;
  drawText(overlay, SANDBOX_TITLE, margin, margin, titleScale, TITLE_RGBA);
  layout.lines.forEach((line, index) => {
    const y = margin + LINE_HEIGHT * titleScale + index * LINE_HEIGHT * scale;
    drawText(overlay, line, margin, y, scale, TEXT_RGBA);
  });
  // A frame, so that even a thumbnail or a crop below the banner reads as placeholder output.
  const edge = scale;
  fillRect(overlay, 0, height - edge, width, edge, TITLE_RGBA);
  fillRect(overlay, 0, 0, edge, height, TITLE_RGBA);
  fillRect(overlay, width - edge, 0, edge, height, TITLE_RGBA);
  return overlay.data;
}

/**
 * Splits text into at most `maxLines` lines of at most `width` characters, at spaces where it can.
 * Only the start of the text that those lines can show is read: a prompt of a megabyte costs what
 * its first lines cost.
 */
function wrap(text: string, width: number, maxLines: number): string[] {
  // Each line takes at most `width` characters and the one space it was cut at.
  const chars = collapsedStart(text, maxLines * (width + 1) + 2);
  const lines: string[] = [];
  let start = 0;
  while (chars.length - start > width && lines.length < maxLines) {
    let cut = start + width;
    while (cut > start && chars[cut] !== ' ') cut--;
    if (cut === start) cut = start + width;
    lines.push(chars.slice(start, cut).join('').trimEnd());
    start = cut;
    while (chars[start] === ' ') start++;
  }
  if (start < chars.length && lines.length < maxLines) lines.push(chars.slice(start).join(''));
  return lines;
}

/**
 * The characters (code points) of the text with each run of white space made one space and the
 * ends trimmed: all of them, or at least `count` from the start when the text is longer.
 */
function collapsedStart(text: string, count: number): string[] {
  for (let take = Math.max(64, 2 * count); ; take *= 4) {
    const whole = take >= text.length;
    const start = (whole ? text : text.slice(0, take)).replace(/\s+/g, ' ').trimStart();
    const chars = Array.from(whole ? start.trimEnd() : start);
    // Past `count`, the last character may be half of a pair cut at `take`: it is never used.
    if (whole || chars.length > count) return chars;
  }
}
