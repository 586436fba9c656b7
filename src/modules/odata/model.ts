// A form's OData entity model, made from the form model (src/lib/form-model/model.ts):
// one entity type for the records (`Submissions`), one per repeat (`Submissions.<repeat path with
// dots>`, as ODK Central names them), groups as complex types, and each answer typed from its
// question. The CSDL document, the feeds and $filter all read this one model.
import { buildFormModel, type FormModel, type FormNode, type FormQuestion, type FormSection } from '../../lib/form-model/model.ts';

export type EdmType = 'Edm.String' | 'Edm.Int64' | 'Edm.Decimal' | 'Edm.Date' | 'Edm.DateTimeOffset' | 'Edm.GeographyPoint' | 'Edm.Boolean';

/** An answer: `key` is its record key (slash path below the root, as stored). */
export interface AnswerProperty {
  readonly kind: 'answer';
  readonly name: string;
  readonly key: string;
  readonly type: EdmType;
}

export interface GroupProperty {
  readonly kind: 'group';
  readonly name: string;
  /** The complex type's name. */
  readonly typeName: string;
  readonly properties: readonly Property[];
}

/** A repeat below this entity or group: a navigation property to its rows. */
export interface RepeatProperty {
  readonly kind: 'repeat';
  readonly name: string;
  /** The repeat's record key (its slash path). */
  readonly key: string;
  readonly entity: EntityModel;
}

export type Property = AnswerProperty | GroupProperty | RepeatProperty;

export interface EntityModel {
  /** The entity set's name: `Submissions` or `Submissions.member.child`. */
  readonly setName: string;
  /** The entity type's name (a simple identifier): `Submission`, `Submissions_member_child`. */
  readonly typeName: string;
  /** The repeat's record key; '' for the records. */
  readonly key: string;
  readonly properties: readonly Property[];
  /** The enclosing entities, outermost (Submissions) first; empty for the records. */
  readonly parents: readonly EntityModel[];
}

export interface ODataModel {
  readonly namespace: string;
  readonly root: EntityModel;
  /** Every entity, by set name: the records first, then the repeats depth-first. */
  readonly sets: ReadonlyMap<string, EntityModel>;
  /** Complex types of the groups, by type name. */
  readonly groups: ReadonlyMap<string, GroupProperty>;
}

export const ROOT_SET = 'Submissions';

function answerType(question: FormQuestion): EdmType {
  if (question.uses.geopoint) return 'Edm.GeographyPoint';
  if (question.uses.exportValue === 'int') return 'Edm.Int64';
  if (question.uses.exportValue === 'decimal') return 'Edm.Decimal';
  if (question.uses.exportValue === 'date') return 'Edm.Date';
  if (question.uses.odataDateTime) return 'Edm.DateTimeOffset';
  return 'Edm.String';
}

/** A simple identifier made from a name (XML names allow `-` and `.`, CSDL identifiers do not). */
function identifier(text: string): string {
  const cleaned = text.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(cleaned) ? cleaned : `_${cleaned}`;
}

class Builder {
  readonly sets = new Map<string, EntityModel>();
  readonly groups = new Map<string, GroupProperty>();

  properties(nodes: readonly FormNode[], typePrefix: string, parents: readonly EntityModel[], setName: string): Property[] {
    const out: Property[] = [];
    for (const node of nodes) {
      if (node.kind === 'question') {
        out.push({ kind: 'answer', name: node.name, key: node.path, type: answerType(node) });
      } else if (node.kind === 'group') {
        const typeName = `${typePrefix}_${identifier(node.name)}`;
        const group: GroupProperty = { kind: 'group', name: node.name, typeName, properties: this.properties(node.children, typeName, parents, setName) };
        this.groups.set(typeName, group);
        out.push(group);
      } else {
        out.push({ kind: 'repeat', name: node.name, key: node.path, entity: this.repeat(node, parents, setName) });
      }
    }
    return out;
  }

  repeat(section: FormSection, parents: readonly EntityModel[], parentSet: string): EntityModel {
    const setName = `${parentSet}.${section.name}`;
    const typeName = identifier(setName.replace(/\./g, '_'));
    // The entity is registered before its children so that sets list parents first.
    const properties: Property[] = [];
    const entity: EntityModel = { setName, typeName, key: section.path, properties, parents };
    this.sets.set(setName, entity);
    properties.push(...this.properties(section.children, typeName, [...parents, entity], setName));
    return entity;
  }
}

export function buildODataModel(form: FormModel): ODataModel {
  const builder = new Builder();
  const properties: Property[] = [];
  const root: EntityModel = { setName: ROOT_SET, typeName: 'Submission', key: '', properties, parents: [] };
  builder.sets.set(ROOT_SET, root);
  properties.push(...builder.properties(form.root.children, 'Submission', [root], ROOT_SET));
  // Sets in model order: the records, then each repeat after its parent.
  const sets = new Map<string, EntityModel>([[ROOT_SET, root]]);
  for (const [name, entity] of builder.sets) if (name !== ROOT_SET) sets.set(name, entity);
  return { namespace: `org.gather.user.${identifier(form.idString)}`, root, sets, groups: builder.groups };
}

export function odataModelOf(formJson: Readonly<Record<string, unknown>>): ODataModel {
  return buildODataModel(buildFormModel(formJson));
}

/** The meta fields every record has, under `__system` (ODK Central's names). */
export const SYSTEM_FIELDS = [
  { name: 'submissionDate', type: 'Edm.DateTimeOffset' },
  { name: 'updatedAt', type: 'Edm.DateTimeOffset' },
  { name: 'submitterName', type: 'Edm.String' },
  { name: 'attachmentsPresent', type: 'Edm.Int64' },
  { name: 'attachmentsExpected', type: 'Edm.Int64' },
  { name: 'status', type: 'Edm.String' },
  { name: 'reviewState', type: 'Edm.String' },
  { name: 'edited', type: 'Edm.Boolean' },
  { name: 'formVersion', type: 'Edm.String' },
  { name: 'recordId', type: 'Edm.Int64' },
] as const satisfies ReadonlyArray<{ name: string; type: EdmType }>;

export type SystemField = (typeof SYSTEM_FIELDS)[number]['name'];

/** The property of a repeat row that holds its parent row's `__id`: `__Submissions-id`, `__Submissions-member-id`. */
export function parentKeyName(parent: EntityModel): string {
  return `__${parent.setName.replace(/\./g, '-')}-id`;
}

/** The answer or group at a slash path of an entity's properties (groups descend, repeats do not). */
export function findProperty(entity: EntityModel, path: readonly string[]): Property | undefined {
  let properties = entity.properties;
  let found: Property | undefined;
  for (const [index, segment] of path.entries()) {
    found = properties.find((p) => p.name === segment);
    if (!found) return undefined;
    if (index < path.length - 1) {
      if (found.kind !== 'group') return undefined;
      properties = found.properties;
    }
  }
  return found;
}
