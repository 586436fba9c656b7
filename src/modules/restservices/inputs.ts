// Reading the REST service routes' bodies into the service's typed input, with DRF's coercions and
// per-field messages. Nothing here throws: the service answers the field errors after its access
// checks, with the address rule's (which depends on the server's settings).
import type { FieldErrors } from '../../errors.ts';
import { asPayload, has, readBoolean, readString } from '../../http/payload.ts';
import { KNOWN_NAMES, SUPPORTED_NAMES, type RestServiceInput } from './service.ts';

/** POST or PUT (every field required), PATCH (`partial`: none). */
export function restServiceInput(body: unknown, partial: boolean): RestServiceInput {
  const payload = asPayload(body);
  const problems: FieldErrors = {};
  const required = !partial;
  const name = readString(payload, 'name', problems, { required, allowBlank: false });
  if (name !== undefined) {
    if (name.length > 50) problems['name'] = ['Ensure this field has no more than 50 characters.'];
    else if (!KNOWN_NAMES.includes(name)) problems['name'] = [`"${name}" is not a valid choice.`];
    else if (!SUPPORTED_NAMES.includes(name)) {
      problems['name'] = [`"${name}" services are not supported by this server; use ${SUPPORTED_NAMES.join(' or ')}.`];
    }
  }
  const serviceUrl = readString(payload, 'service_url', problems, { required, allowBlank: false });
  if (serviceUrl !== undefined && serviceUrl.length > 200) problems['service_url'] = ['Ensure this field has no more than 200 characters.'];
  let secret: string | null | undefined;
  if (has(payload, 'secret')) {
    const text = payload['secret'] === null ? '' : readString(payload, 'secret', problems);
    if (text !== undefined && text.length > 255) problems['secret'] = ['Ensure this field has no more than 255 characters.'];
    secret = text === '' ? null : text;
  }
  const sendUpdates = readBoolean(payload, 'send_updates', problems);
  const rawForm = payload['xform'];
  const formRef = typeof rawForm === 'string' || typeof rawForm === 'number' ? String(rawForm).trim() : undefined;
  if (has(payload, 'xform') && (formRef === undefined || formRef === '')) problems['xform'] = ['This field may not be null.'];
  else if (required && formRef === undefined) problems['xform'] = ['This field is required.'];
  return {
    ...(formRef !== undefined ? { formRef } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(serviceUrl !== undefined ? { serviceUrl } : {}),
    ...(secret !== undefined ? { secret } : {}),
    ...(sendUpdates !== undefined ? { sendUpdates } : {}),
    fieldErrors: problems,
  };
}
