// The one place this app reaches into ODK Web Forms beyond its documented props and events: the
// form's current answers before Send, for drafts (drafts.ts). Version 0.22 gives its host nothing
// for this, but its form header component (FormHeader) is rendered with the engine's root node as
// its `form` prop, and that node answers `prepareInstancePayload()` (the instance XML and the
// files its answers name, as Send hands them over) and `instanceState.instanceXML` (the XML alone,
// without Send's side effects). Everything here checks the shape it finds: when a later version
// changes it, `findFormRoot` answers undefined, drafts are off, and the form itself still works.
import type { ComponentPublicInstance, VNode } from 'vue';

/** What drafts need of the engine's root node. */
export interface FormRoot {
  /** The instance XML as it stands (cheap: no validation, no timestamps set). */
  currentXml(): string | undefined;
  /** The instance XML and attached files, as Send would hand them over; undefined if not as expected. */
  payload(): Promise<{ readonly instance: File; readonly attachments: readonly File[] } | undefined>;
  /** The engine's own node: a new one when the form starts a new record. */
  readonly node: object;
}

const HEADER_NAME = 'FormHeader';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function componentName(vnode: VNode): string | undefined {
  const type: unknown = vnode.type;
  return isRecord(type) && typeof type['__name'] === 'string' ? type['__name'] : undefined;
}

/** The header's `form` prop, found depth-first in the rendered tree (a few hundred nodes at most). */
function findHeaderForm(vnode: VNode, depth = 0): unknown {
  if (depth > 200) return undefined;
  if (vnode.component) {
    if (componentName(vnode) === HEADER_NAME) return vnode.component.props['form'];
    return findHeaderForm(vnode.component.subTree, depth + 1);
  }
  if (Array.isArray(vnode.children)) {
    for (const child of vnode.children) {
      if (!isRecord(child) || !('__v_isVNode' in child)) continue;
      const found = findHeaderForm(child as unknown as VNode, depth + 1);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

function asPayload(value: unknown): { instance: File; attachments: File[] } | undefined {
  if (!isRecord(value) || !Array.isArray(value['data'])) return undefined;
  const data: unknown = value['data'][0];
  if (!isRecord(data) || !(data['instanceFile'] instanceof File) || !Array.isArray(data['attachments'])) return undefined;
  const attachments = data['attachments'].filter((file): file is File => file instanceof File);
  return { instance: data['instanceFile'], attachments };
}

/** The engine's root node of the form `component` (an `OdkWebForm`) shows, once it is open. */
export function findFormRoot(component: ComponentPublicInstance | null | undefined): FormRoot | undefined {
  let node: unknown;
  try {
    node = component ? findHeaderForm(component.$.subTree) : undefined;
  } catch {
    return undefined;
  }
  if (!isRecord(node) || typeof node['prepareInstancePayload'] !== 'function' || !isRecord(node['instanceState'])) return undefined;
  const engine = node;
  const prepare = node['prepareInstancePayload'] as (options: { payloadType: 'monolithic' }) => unknown;
  return {
    node: engine,
    currentXml() {
      try {
        const state = engine['instanceState'];
        const xml = isRecord(state) ? state['instanceXML'] : undefined;
        return typeof xml === 'string' ? xml : undefined;
      } catch {
        return undefined;
      }
    },
    async payload() {
      try {
        return asPayload(await prepare.call(engine, { payloadType: 'monolithic' }));
      } catch {
        return undefined;
      }
    },
  };
}
