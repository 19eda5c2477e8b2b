/**
 * The one progress style of the long commands (local/cli/progress.ts), without a terminal: a counted
 * task is a line at its start, at every further 10% and at its end; other events are lines; a
 * disabled Progress (`--no-progress`, `--json`) writes nothing.
 */
import { Progress } from '../../local/cli/progress';

function fakeStream(): { stream: NodeJS.WriteStream; lines: () => string[] } {
  const written: string[] = [];
  const stream = { isTTY: false, write: (chunk: string) => written.push(chunk) > 0 } as unknown as NodeJS.WriteStream;
  return { stream, lines: () => written.join('').trimEnd().split('\n') };
}

describe('Progress without a terminal', () => {
  it('writes a counted task at its start, every 10% and its end, with the latest detail', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(true, stream);
    const task = progress.task('round 1 seeking agents', 40, 'chunks');
    for (let done = 1; done <= 40; done++) task.update(done, done === 40 ? '2 failed' : undefined);

    expect(lines()[0]).toBe('round 1 seeking agents: 0/40 chunks');
    expect(lines()).toHaveLength(11);
    expect(lines()[1]).toBe('round 1 seeking agents: 4/40 chunks');
    expect(lines()[10]).toBe('round 1 seeking agents: 40/40 chunks (2 failed)');
  });

  it('writes every item of a small task, and other events as lines of their own', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(true, stream);
    const task = progress.task('job', 2, 'questions');
    task.update(1, 'question 1: SUCCEEDED');
    progress.line('note');
    task.update(2, 'question 0: FAILED');

    expect(lines()).toEqual(['job: 0/2 questions', 'job: 1/2 questions (question 1: SUCCEEDED)', 'note', 'job: 2/2 questions (question 0: FAILED)']);
  });

  it('writes nothing when disabled', () => {
    const { stream, lines } = fakeStream();
    const progress = new Progress(false, stream);
    progress.task('eval', 3, 'records').update(3, 'x');
    progress.line('hidden');
    progress.stop();

    expect(lines()).toEqual(['']);
  });
});
