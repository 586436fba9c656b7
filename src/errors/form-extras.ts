// Refusals of what hangs off a form: metadata (media, linked datasets), REST services, reviews,
// statistics, and ODK Briefcase's Aggregate API.
import { detail, field, list, message } from './shapes.ts';

export const formExtraErrors = {
  metadataTypeReadOnly: (dataType: string) => field('data_type', `"${dataType}" entries cannot be changed through this server's API yet.`),
  metaPermsUndeletable: () => field('data_type', 'A form keeps its meta permissions: change them instead.'),
  /** A metadata or REST service `xform` that names no form the caller sees. */
  xformDoesNotExist: (formRef: string) => field('xform', `Invalid pk "${formRef}" - object does not exist.`),
  /** Raised inside the serializer's save() in onadata: a bare list. */
  metadataExists: () => list(['Object already exists']),
  restServiceNotUnique: () => field('non_field_errors', 'The fields xform, name, service_url must make a unique set.'),
  reviewListEmpty: () => field('non_field_errors', 'This list may not be empty.'),
  reviewListTooLong: (max: number) => field('non_field_errors', `A list may hold at most ${max} reviews.`),
  statsGroupMissing: () => detail(400, 'Give the field to group by: group=<field name>, e.g. group=_submission_time.'),
  statsGroupTooLong: () => detail(400, 'The group field name is too long.'),
  briefcaseFormIdMissing: () => detail(400, 'formId is required: the id_string of the form.'),
  /** A cursor, page size or instance id Briefcase sent that cannot be read, in the reader's words. */
  briefcaseParameterInvalid: (problem: string) => detail(400, problem),
  briefcaseXmlMissing: () => message('Missing xml file.'),
  briefcaseXFormUnreadable: (problem: string) => message(problem),
  briefcaseFormExists: () => message('Form with this id or SMS-keyword already exists.'),
} as const;
