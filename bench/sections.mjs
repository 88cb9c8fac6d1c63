// The mode sections of bench/RESULTS.md. Each mode of the bench other than the normal run
// (`--workloads`, `--access`, `--tracker`) owns one section of the file, between
// `<!-- <name>:start -->` and `<!-- <name>:end -->`: a mode rewrites only its own section
// (spliceSection), and the normal run, which rewrites the file, carries every section over unchanged
// (extractSection). The head and foot every section shares (who wrote it, the goals, the versions) are
// rendered here too.
import { mark } from './report.mjs';

/** Every mode section, in the order the normal run writes them back. */
export const SECTIONS = ['workloads', 'access', 'tracker', 'gate', 'invalidation', 'postgres', 'redis'];

/** The markers of section `name`. @param {string} name */
export function sectionMarks(name) {
  return { start: `<!-- ${name}:start -->`, end: `<!-- ${name}:end -->` };
}

/** Where section `name` is in `fileText`: [start, end after the end marker], or null. */
function locate(fileText, name) {
  const { start, end } = sectionMarks(name);
  const from = fileText.indexOf(start);
  const to = fileText.indexOf(end);
  return from >= 0 && to > from ? [from, to + end.length] : null;
}

/**
 * `fileText` with section `name` replaced by `section` (appended at the end when it has none).
 * @param {string} fileText
 * @param {string} name     workloads, access or tracker
 * @param {string} section  markers included
 */
export function spliceSection(fileText, name, section) {
  const at = locate(fileText, name);
  if (at) return fileText.slice(0, at[0]) + section.trimEnd() + fileText.slice(at[1]);
  return `${fileText.trimEnd()}\n\n${section}`;
}

/** Section `name` of `fileText`, markers included, or '' when it has none. @param {string} fileText @param {string} name */
export function extractSection(fileText, name) {
  const at = locate(fileText, name);
  return at ? `${fileText.slice(at[0], at[1])}\n` : '';
}

/** Every mode section of `fileText`, each followed by a blank line ('' when there is none). */
export function extractSections(fileText) {
  return SECTIONS.map((name) => extractSection(fileText, name))
    .filter(Boolean)
    .map((s) => `\n${s}`)
    .join('');
}

/**
 * The first lines of a section: its start marker, its title, who wrote it and how, a warning when
 * dist/ changed under the run, and its goals.
 * @param {object} o
 * @param {string} o.name   the section's marker name, also its flag (`--<name>`)
 * @param {string} o.title
 * @param {string} o.about  what the run measured and against what (after "Written by …")
 * @param {{ok: boolean | null, text: string}[]} o.goals
 * @param {{date: string, command: string, totalSeconds: number, distChanged: boolean}} o.meta
 * @returns {string[]}
 */
export function sectionHead({ name, title, about, goals, meta }) {
  const out = [sectionMarks(name).start, `## ${title}`, ''];
  out.push(
    `Written by \`bench/run.mjs --${name}\` on ${meta.date}. Command: \`${meta.command}\`. Whole run: ` +
      `${meta.totalSeconds.toFixed(0)} s. ${about} A normal \`npm run bench\` and the other modes keep this ` +
      `section as it is; \`npm run bench -- --${name}\` rewrites only this section.`,
    '',
  );
  if (meta.distChanged) {
    out.push(
      '> **Warning: `dist/` changed while this run was measuring** (the SDK was rebuilt): re-run.',
      '',
    );
  }
  out.push('### Goals', '');
  for (const g of goals) out.push(`- **${mark(g.ok).trim()}** ${g.text}`);
  out.push('');
  return out;
}

/**
 * The last lines of a section: the versions measured and the end marker.
 * @param {string} name
 * @param {{node: string, versions: Record<string, string>, machine: {cpuModel: string, cpuCount: number, loadavg: number[]}}} meta
 * @param {string[]} packages  which of meta.versions to name
 * @returns {string[]}
 */
export function sectionFoot(name, meta, packages) {
  return [
    '### Versions',
    '',
    `Node ${meta.node}; ${Object.entries(meta.versions)
      .filter(([pkg]) => packages.includes(pkg))
      .map(([pkg, v]) => `${pkg} ${v}`)
      .join('; ')}; ${meta.machine.cpuModel} × ${meta.machine.cpuCount}; load average at start ` +
      `${meta.machine.loadavg.map((x) => x.toFixed(2)).join(', ')}.`,
    '',
    sectionMarks(name).end,
  ];
}

/** The goals as the terminal shows them. @param {{ok: boolean | null, text: string}[]} goals */
export const compactGoals = (goals) => goals.map((g) => `${mark(g.ok)}  ${g.text}`);

/** The first two lines of an error message, at most 200 characters. */
export const firstLine = (s) => String(s).split('\n').slice(0, 2).join(' ').slice(0, 200);
