// The survey tree's element types: sections (survey, groups, repeats, entity
// declarations), questions, external instances and entity parts.
import type { Json, JsonObject } from '../types.ts';

export type QuestionClass = 'plain' | 'input' | 'select' | 'upload' | 'trigger' | 'range' | 'osm' | 'geo';

export interface Option {
  name: string;
  label: Json | undefined;
  media: JsonObject | undefined;
  smsOption: string | undefined;
  /** Extra choices columns, written into the choice list's instance items. */
  extra: Array<[string, Json]>;
  itextRef?: string;
  source: JsonObject;
}

export interface Itemset {
  name: string;
  options: Option[];
  requiresItext: boolean;
  usedBySearch: boolean;
}

interface ElementBase {
  name: string;
  /** The media cell(s) as given; `media` below is set only when they form a dict. */
  mediaValue?: Json | undefined;
  label: Json | undefined;
  parent: Section | undefined;
  /** The element's dict as parsed (for the form JSON). */
  data: JsonObject;
  xpathCache?: string;
}

export interface Section extends ElementBase {
  kind: 'survey' | 'group' | 'repeat' | 'entity';
  children: SurveyElement[];
  bind: JsonObject | undefined;
  control: JsonObject | undefined;
  hint: Json | undefined;
  media: JsonObject | undefined;
  instance: JsonObject | undefined;
  flat: boolean;
}

export interface Question extends ElementBase {
  kind: 'question';
  type: string;
  questionClass: QuestionClass;
  bind: JsonObject | undefined;
  control: JsonObject | undefined;
  hint: Json | undefined;
  guidanceHint: Json | undefined;
  media: JsonObject | undefined;
  instance: JsonObject | undefined;
  defaultValue: string | undefined;
  dynamicDefault: boolean;
  actions: JsonObject[];
  trigger: string[] | undefined;
  choiceFilter: string | undefined;
  query: string | undefined;
  parameters: JsonObject | undefined;
  itemset: string | undefined;
  listName: string | undefined;
  choices: Itemset | undefined;
  osmTags: Array<{ name: string; label: Json | undefined; choices: Option[] | undefined; data: JsonObject }>;
  /** Keys the type's defaults supplied (left out of the form JSON unless the user set them). */
  typeDefaultKeys: string[];
  /** The user's own values for keys the type also defaults (bind, control, parameters). */
  userValues: JsonObject;
}

export interface ExternalInstance extends ElementBase {
  kind: 'external';
  type: string;
}

/** An entity declaration's attribute (dataset, id, create...) or its label node. */
export interface EntityPart extends ElementBase {
  kind: 'attribute' | 'entity-label';
  bind: JsonObject | undefined;
  actions: JsonObject[];
  value: string;
}

export type SurveyElement = Section | Question | ExternalInstance | EntityPart;

export interface SurveyTree {
  root: Section;
  choices: Map<string, Itemset>;
  /** question name -> [target question name, calculation] pairs triggered by it. */
  setvalueTriggers: Map<string, Array<[string, string]>>;
  setgeopointTriggers: Map<string, Array<[string, string]>>;
}

export function isSection(e: SurveyElement): e is Section {
  return e.kind === 'survey' || e.kind === 'group' || e.kind === 'repeat' || e.kind === 'entity';
}

export function isEntityPart(e: SurveyElement): e is EntityPart {
  return e.kind === 'attribute' || e.kind === 'entity-label';
}
