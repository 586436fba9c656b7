// ${name} -> XPath. Inside repeats a reference to a sibling of the same repeat
// instance becomes a relative path (../name) so it points at the current
// instance rather than the first one.
import { XlsFormError } from '../errors.ts';
import { NCNAME, tokenize } from '../parse/expression.ts';
import { escapeAttr, escapeText } from './xml.ts';
import { descendants, isEntityPart, type Section, type SurveyElement, type SurveyTree, xpathOf, xpathRelativeTo } from '../survey/tree.ts';

const REF = new RegExp(`\\$\\{(last-saved#)?(${NCNAME})\\}`, 'g');
const INDEXED_REPEAT = /indexed-repeat\([^)]+\)/g;
const FUNCTION_ARGS = /\b[^()]+\((.*)\)$/;
const INSTANCE_CALL = /instance\([^)]+.+/;
const BRACKET = /\[([^\]]+)\]/g;
const LAST_SAVED = '__last-saved';

type Element = SurveyElement;

function isRepeat(e: Section): boolean {
  return e.kind === 'repeat';
}

function nearestRepeat(e: Element): Section | undefined {
  for (let p = e.parent; p; p = p.parent) if (isRepeat(p)) return p;
  return undefined;
}

/** pyxform's ancestor walk: both chains step up in turn until one reaches a visited ancestor of the wanted kind. */
function lowestCommonAncestor(
  self: Element,
  other: Element,
  repeatsOnly: boolean,
): { selfSteps: number; lca: Section } | undefined {
  const wanted = (s: Section) => (repeatsOnly ? s.kind === 'repeat' : s.kind === 'repeat' || s.kind === 'group');
  const selfSeen = new Map<Section, number>();
  const otherSeen = new Map<Section, number>();
  let a = self.parent;
  let b = other.parent;
  let da = 1;
  let db = 1;
  while (a || b) {
    if (a) {
      selfSeen.set(a, da);
      if (wanted(a) && otherSeen.has(a)) return { selfSteps: da, lca: a };
      da++;
      a = a.parent;
    }
    if (b) {
      otherSeen.set(b, db);
      if (wanted(b) && selfSeen.has(b)) return { selfSteps: selfSeen.get(b) ?? 0, lca: b };
      db++;
      b = b.parent;
    }
  }
  return undefined;
}

export class References {
  private readonly byName = new Map<string, Element | null>();

  constructor(tree: SurveyTree) {
    for (const e of descendants(tree.root)) {
      if (e.kind === 'external' || isEntityPart(e)) continue;
      this.byName.set(e.name, this.byName.has(e.name) ? null : e);
    }
  }

  element(name: string, intro?: string): Element {
    const found = this.byName.get(name);
    const prefix = intro ? `${intro} ` : '';
    if (found === undefined) throw new XlsFormError(`${prefix}There is no survey element named '${name}'.`, { code: 'unknown_reference' });
    if (found === null) throw new XlsFormError(`${prefix}There are multiple survey elements named '${name}'.`, { code: 'ambiguous_reference' });
    return found;
  }

  private relativePath(target: Element, context: Element, useCurrent: boolean, referenceParent: boolean): string | undefined {
    const relation = lowestCommonAncestor(context, target, true);
    if (!relation) return undefined;
    let steps: number;
    let path: string;
    const lcar = relation.lca;
    const targetRepeat = nearestRepeat(target);
    if (referenceParent && lcar === targetRepeat && (nearestRepeat(lcar) === undefined || nearestRepeat(context) !== lcar)) {
      steps = relation.selfSteps + 1;
      path = xpathRelativeTo(target, lcar.parent);
    } else {
      const lca = lowestCommonAncestor(context, target, false);
      steps = lca?.selfSteps ?? 0;
      path = xpathRelativeTo(target, lca?.lca);
    }
    if (!steps) return undefined;
    if (!path.endsWith(target.name)) path = `/${target.name}`;
    const prefix = useCurrent ? ' current()/' : ' ';
    return `${prefix}${Array.from({ length: steps }, () => '..').join('/')}${path} `;
  }

  /** One reference's replacement, given where it sits in `whole`. */
  private replacement(
    whole: string,
    start: number,
    end: number,
    name: string,
    lastSaved: boolean,
    context: Element | undefined,
    useCurrent: boolean,
    referenceParent: boolean,
  ): string {
    const intro = `There has been a problem trying to replace \${${lastSaved ? 'last-saved#' : ''}${name}} with the XPath to the survey element named '${name}'.`;
    const target = this.element(name, intro);
    if (context && !lastSaved && relativeAllowed(whole, start, end, name)) {
      const current = useCurrent || inInstancePredicate(whole, start, end);
      const relative = this.relativePath(target, context, current, referenceParent);
      if (relative) return relative;
    }
    return ` ${lastSaved ? `instance('${LAST_SAVED}')` : ''}${xpathOf(target)} `;
  }

  insertXpaths(text: string, context: Element | undefined, useCurrent = false, referenceParent = false): string {
    if (!(text.length > 2 && text.includes('${'))) return text;
    return text.replace(REF, (m: string, saved: string | undefined, name: string, offset: number) =>
      this.replacement(text, offset, offset + m.length, name, saved !== undefined, context, useCurrent, referenceParent),
    );
  }

  /** Label/hint text with ${name} and instance(...) expressions turned into <output/> elements; undefined when unchanged. */
  insertOutputs(text: string, context: Element | undefined): string | undefined {
    if (text === '-') return undefined;
    return this.insertOutputsEscaped(escapeText(text), context);
  }

  /** insertOutputs() of text already escaped for XML. */
  insertOutputsEscaped(original: string, context: Element | undefined): string | undefined {
    let value = this.replaceInstanceExpressions(original, context);
    if (value.length > 2 && value.includes('${')) {
      const whole = value;
      value = value.replace(REF, (m: string, saved: string | undefined, name: string, offset: number) => {
        const path = this.replacement(whole, offset, offset + m.length, name, saved !== undefined, context, false, false);
        return `<output value="${escapeAttr(path)}"/>`;
      });
    }
    return value === original ? undefined : value;
  }

  private replaceInstanceExpressions(xml: string, context: Element | undefined): string {
    if (xml.length <= 9 || !xml.includes('instance(')) return xml;
    const bounds = instanceBoundaries(xml);
    let offset = 0;
    let out = xml;
    for (const [start, end] of bounds) {
      const old = xml.slice(start, end);
      const replaced = old.replace(REF, (m: string, saved: string | undefined, name: string, at: number) =>
        this.replacement(old, at, at + m.length, name, saved !== undefined, context, false, false),
      );
      const output = `<output value="${escapeAttr(replaced)}"/>`;
      out = out.slice(0, start + offset) + output + out.slice(end + offset);
      offset += output.length - old.length;
    }
    return out;
  }
}

/** pyxform's rules for references inside indexed-repeat(): only some argument positions stay absolute. */
function relativeAllowed(whole: string, start: number, end: number, name: string): boolean {
  if (!whole.includes('indexed-repeat(')) return true;
  const matches = [...whole.matchAll(INDEXED_REPEAT)];
  for (let i = 0; i < matches.length; i++) {
    const ir = matches[i];
    if (!ir) break;
    const irStart = ir.index;
    const irEnd = irStart + ir[0].length;
    if (end > irEnd) {
      // pyxform advances its iterator twice here.
      i++;
      if (i >= matches.length) return true;
      continue;
    }
    if (end < irStart || start > irEnd) return true;
    const args = (FUNCTION_ARGS.exec(ir[0])?.[1] ?? '').split(',');
    let index: number | undefined;
    args.forEach((arg, idx) => {
      if (arg.trim().includes(`\${${name}}`)) index = idx;
    });
    return index !== undefined && ![0, 1, 3, 5].includes(index);
  }
  return false;
}

function inInstancePredicate(whole: string, start: number, end: number): boolean {
  if (!INSTANCE_CALL.test(whole)) return false;
  BRACKET.lastIndex = 0;
  for (let m = BRACKET.exec(whole); m; m = BRACKET.exec(whole)) {
    if (start >= m.index && end <= m.index + m[0].length) return true;
  }
  return false;
}

/** [start, end) spans of instance('x')/path[pred] expressions in the text. */
function instanceBoundaries(xml: string): Array<[number, number]> {
  const tokens = tokenize(xml);
  let inInstance = false;
  let inPath = false;
  let inPredicate = false;
  let last: { type: string; value: string; end: number } | undefined;
  const bounds: number[] = [];
  for (const t of tokens) {
    let emit = false;
    if (!inInstance && t.type === 'FUNC_CALL' && t.value === 'instance(') {
      inInstance = true;
      emit = true;
      bounds.push(t.start);
    } else if (inInstance && last) {
      if (t.type === 'SYSTEM_LITERAL' && last.type === 'FUNC_CALL' && last.value === 'instance(') emit = true;
      else if (last.type === 'SYSTEM_LITERAL' && t.type === 'CLOSE_PAREN') emit = true;
      else if (t.type === 'PATH_SEP' && (last.type === 'CLOSE_PAREN' || last.type === 'XPATH_PRED_END')) {
        emit = true;
        inPath = true;
      } else if (inPath) {
        if (t.type === 'WHITESPACE') inPath = false;
        else if (t.type !== 'XPATH_PRED_START') emit = true;
        else {
          emit = true;
          inPath = false;
          inPredicate = true;
        }
      } else if (inPredicate) {
        emit = true;
        if (t.type === 'XPATH_PRED_END') inPredicate = false;
      }
    }
    if (emit) last = t;
    else if (inInstance) {
      inInstance = false;
      if (last) bounds.push(last.end);
    }
  }
  if (last) bounds.push(last.end);
  const pairs: Array<[number, number]> = [];
  for (let i = 0; i + 1 < bounds.length; i += 2) pairs.push([bounds[i] ?? 0, bounds[i + 1] ?? 0]);
  return pairs;
}
