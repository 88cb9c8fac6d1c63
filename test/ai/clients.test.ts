// The OpenAI and Anthropic ways in, in one file: the provider libraries are imported once per
// test worker, not once per file (most of these tests' time is those imports).
import './openai.cases.js';
import './streams.cases.js';
import './anthropic.cases.js';
import './meter.cases.js';
import './route-hold.cases.js';
import './hold-kept.cases.js';
