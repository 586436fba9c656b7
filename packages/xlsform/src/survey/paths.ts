// Element paths in the primary instance, and document-order traversal.
import { isSection, type Section, type SurveyElement } from './types.ts';

function ownStep(element: SurveyElement): string {
  return element.kind === 'attribute' ? `@${element.name}` : element.name;
}

export function xpathOf(element: SurveyElement): string {
  if (element.xpathCache !== undefined) return element.xpathCache;
  const parts: string[] = [];
  for (let p = element.parent; p; p = p.parent) if (p.kind === 'survey' || !p.flat) parts.push(p.name);
  parts.reverse();
  if (element.kind === 'survey' || !('flat' in element && element.flat)) parts.push(ownStep(element));
  const path = `/${parts.join('/')}`;
  element.xpathCache = path;
  return path;
}

/** Path of `element` below `ancestor` (exclusive), e.g. "/group/q". */
export function xpathRelativeTo(element: SurveyElement, ancestor: Section | undefined): string {
  const parts: string[] = [];
  for (let p = element.parent; p && p !== ancestor; p = p.parent) if (p.kind === 'survey' || !p.flat) parts.push(p.name);
  parts.reverse();
  if (element.kind === 'survey' || !('flat' in element && element.flat)) parts.push(ownStep(element));
  return `/${parts.join('/')}`;
}

// The tree does not change shape once built, so each section's list is kept.
const descendantsCache = new WeakMap<Section, SurveyElement[]>();

/** The section and everything below it, in document order. */
export function descendants(section: Section): SurveyElement[] {
  const cached = descendantsCache.get(section);
  if (cached) return cached;
  const out: SurveyElement[] = [];
  const visit = (s: Section): void => {
    out.push(s);
    for (const child of s.children) {
      if (isSection(child)) visit(child);
      else out.push(child);
    }
  };
  visit(section);
  descendantsCache.set(section, out);
  return out;
}
