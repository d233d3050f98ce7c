import { DEFAULT_OPENAI_MODELS } from '@imagegen/server';

// `npm run --silent openai-models`: the OpenAI Images API's built-in model table on stdout, in the
// format OPENAI_MODELS reads (start an edited table from it); the docs `generate` script writes it
// to .generated/openai-models.json for the page that prints it.
process.stdout.write(`${JSON.stringify(DEFAULT_OPENAI_MODELS, null, 2)}\n`);
