import type { RequestFields } from './request-fields.ts';

/**
 * The `style` of the one-call generators (`/generate/v1`, `/generate/v3`), applied as a prompt
 * style: words added after the prompt, and for the graphs that read a negative prompt, words
 * added to it. No model is switched and no node pack runs: a style is text the model reads.
 * `/generate/v1` takes the three presets of its page; `/generate/v3` also the styles the original
 * frontend sends there. A style outside the table fails the task naming it, never passes unread.
 */
export interface PromptStyle {
  readonly positive: string;
  readonly negative: string;
}

export const PROMPT_STYLES: Readonly<Record<string, PromptStyle>> = {
  realistic_portrait: {
    positive: 'realistic portrait photograph, natural skin texture, soft light, sharp focus, 85mm lens',
    negative: 'cartoon, anime, illustration, painting, 3d render, deformed face',
  },
  fantasy_art: {
    positive: 'fantasy art, epic scene, highly detailed digital painting, dramatic lighting',
    negative: 'photograph, plain background, low detail',
  },
  cartoon_anime: {
    positive: 'anime cartoon style, clean line art, cel shading, vibrant colours',
    negative: 'photograph, photorealistic, realistic skin, 3d render',
  },
  realistic: {
    positive: 'photorealistic, natural light, detailed textures, sharp focus',
    negative: 'cartoon, anime, illustration, painting',
  },
  anime: {
    positive: 'anime style, clean line art, cel shading, expressive eyes',
    negative: 'photograph, photorealistic',
  },
  cartoon: {
    positive: 'cartoon style, bold outlines, flat bright colours',
    negative: 'photograph, photorealistic',
  },
  ghibli: {
    positive: 'Studio Ghibli style animation, hand-painted backgrounds, soft warm colours',
    negative: 'photograph, photorealistic, 3d render',
  },
  pixar: {
    positive: 'Pixar style 3d animation, soft global illumination, expressive characters',
    negative: 'photograph, flat illustration',
  },
  indian: {
    positive: 'Indian art style, rich ornamental patterns, vivid traditional colours',
    negative: 'plain, monochrome',
  },
  logo: {
    positive: 'minimal vector logo, flat design, simple shapes, plain background',
    negative: 'photograph, cluttered background, gradients, realistic',
  },
  'book-cover': {
    positive: 'book cover design, striking central composition, room for the title',
    negative: 'cluttered, low detail',
  },
  fashion: {
    positive: 'fashion photography, editorial look, studio lighting, detailed fabric',
    negative: 'cartoon, illustration, deformed hands',
  },
};

const KNOWN = Object.keys(PROMPT_STYLES)
  .map((key) => `'${key}'`)
  .join(', ');

/** Why a style outside the table fails the task, as the docs print it. */
export const UNKNOWN_STYLE = `is not a style this engine knows (${KNOWN}); send null for none`;

/** The prompt, a comma, the style's words. */
function joined(text: string, words: string): string {
  return text.trim() ? `${text}, ${words}` : words;
}

/**
 * The fields styledPrompts reads (Flux has no negative prompt). `style` is a preset's name; any
 * other value is refused as an unknown style, so the SD graph, whose `style` is a number on the
 * paths without presets, can share one reading of it.
 */
export interface StyleFields {
  readonly prompt: string;
  readonly negative_prompt?: string | null | undefined;
  readonly style: string | number | null | undefined;
}

/** The request's prompt and negative prompt with its `style` applied (null: no style). */
export function styledPrompts(fields: RequestFields<StyleFields>): { positive: string; negative: string } {
  const prompt = fields.string('prompt');
  const negative = fields.string('negative_prompt');
  const name = fields.input['style'];
  if (name === undefined || name === null) return { positive: prompt, negative };
  const style = PROMPT_STYLES[String(name)];
  if (!style) fields.refuse('style', `'${String(name)}' ${UNKNOWN_STYLE}`);
  return { positive: joined(prompt, style.positive), negative: joined(negative, style.negative) };
}
