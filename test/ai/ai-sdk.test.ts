// The AI SDK way in, alone and under a gated route, in one file (the `ai` imports once).
import './model.cases.js';
import './gate.cases.js';
