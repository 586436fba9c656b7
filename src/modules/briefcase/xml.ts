// The Briefcase Aggregate API's documents: the idChunk of submissionList and the submission of
// downloadSubmission, in the shape onadata's templates give them.
import { escapeXmlAttribute, escapeXmlText } from '../forms/xform-stamp.ts';

export function idChunkXml(uuids: readonly string[], cursor: string): string {
  const ids = uuids.map((uuid) => `<id>uuid:${escapeXmlText(uuid)}</id>`).join('');
  return `<idChunk xmlns="http://opendatakit.org/submissions"><idList>${ids}</idList><resumptionCursor>${escapeXmlText(cursor)}</resumptionCursor></idChunk>`;
}

export interface SubmissionMediaFile {
  filename: string;
  /** `md5:<hex>` of the file. */
  hash: string;
  downloadUrl: string;
}

/** The attributes downloadSubmission sets on the instance's root element. */
export interface RootAttributes {
  instanceID: string;
  submissionDate: string;
}

const REPLACED = new Set(['instanceID', 'submissionDate', 'isComplete', 'markedAsCompleteDate', 'xmlns']);
const ATTRIBUTE = /([^\s=/>]+)\s*=\s*("[^"]*"|'[^']*')/g;

/**
 * The stored instance with its XML declaration (and anything else before the root) dropped and
 * the root element carrying the record's instanceID, submission date and completeness, as onadata
 * sets them (it also drops the root's default namespace, which Briefcase's parser expects absent).
 * Everything after the root's start tag is left byte for byte.
 */
export function instanceForBriefcase(xml: string, attributes: RootAttributes): string {
  const start = findRootStart(xml);
  if (!start) return xml;
  const { name, attributeText, selfClosing, to } = start;
  const kept = [...attributeText.matchAll(ATTRIBUTE)]
    .filter((m) => m[1] !== undefined && !REPLACED.has(m[1]))
    .map((m) => ` ${m[1] ?? ''}=${m[2] ?? '""'}`)
    .join('');
  const added =
    ` instanceID="${escapeXmlAttribute(attributes.instanceID)}" submissionDate="${escapeXmlAttribute(attributes.submissionDate)}"` +
    ` isComplete="true" markedAsCompleteDate="${escapeXmlAttribute(attributes.submissionDate)}"`;
  return `<${name}${kept}${added}${selfClosing ? '/>' : '>'}${xml.slice(to)}`;
}

interface RootStart {
  name: string;
  attributeText: string;
  selfClosing: boolean;
  from: number;
  to: number;
}

/** The root element's start tag: the first `<` that opens an element (not `<?`, `<!`). */
function findRootStart(xml: string): RootStart | undefined {
  let at = 0;
  for (;;) {
    at = xml.indexOf('<', at);
    if (at === -1) return undefined;
    const next = xml[at + 1];
    if (next === '?') at = xml.indexOf('?>', at) + 2;
    else if (xml.startsWith('<!--', at)) at = xml.indexOf('-->', at) + 3;
    else if (next === '!') at = xml.indexOf('>', at) + 1;
    else break;
    if (at < 2) return undefined;
  }
  const match = /^<([^\s/>]+)((?:\s+[^\s=/>]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>/.exec(xml.slice(at));
  if (!match || match[1] === undefined) return undefined;
  return { name: match[1], attributeText: match[2] ?? '', selfClosing: match[3] === '/', from: at, to: at + match[0].length };
}

export function submissionXml(instance: string, media: readonly SubmissionMediaFile[]): string {
  const files = media
    .map(
      (m) =>
        `<mediaFile><filename>${escapeXmlText(m.filename)}</filename><hash>${escapeXmlText(m.hash)}</hash>` +
        `<downloadUrl>${escapeXmlText(m.downloadUrl)}</downloadUrl></mediaFile>`,
    )
    .join('');
  return (
    `<?xml version='1.0' encoding='UTF-8' ?>\n<submission xmlns="http://opendatakit.org/submissions" xmlns:orx="http://openrosa.org/xforms">` +
    `<data>${instance}</data>${files}</submission>`
  );
}
