import { AccountViewError } from '../core/errors/view.js';

/** The longest event the view reads, in characters: a state is a few KB; more is not a state stream. */
const MAX_EVENT = 1_000_000;

/**
 * Reads a Server-Sent Events body and calls `onState` with the data of each `state` event, until the
 * body ends (resolves) or fails (rejects). Comments (the heartbeat) and `retry` lines are skipped.
 * A body that goes on without ending an event (something between that is not a state stream) is
 * refused rather than buffered without end.
 */
export async function readEvents(
  body: ReadableStream<Uint8Array>,
  onState: (data: string) => void,
): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
    let end = buffer.indexOf('\n\n');
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data += (data ? '\n' : '') + line.slice(5).replace(/^ /, '');
      }
      if (event === 'state' && data) onState(data);
      end = buffer.indexOf('\n\n');
    }
    if (buffer.length > MAX_EVENT)
      throw new AccountViewError('invalid_answer', 'the state stream sent no event');
  }
}
