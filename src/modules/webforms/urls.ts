// The web forms' addresses (web/src/webform): a form's fill page (its enketo_url), its preview
// that stores nothing (enketo_preview_url), the fill page that thanks and stops after one record
// (single_submit_url), and the edit page of one record. They sit under /forms/, a name no account
// can take (accounts/validation.ts), beside onadata's form-scoped OpenRosa routes
// /forms/{pk}/formList and /forms/{pk}/submission that the pages use, and Gather's
// /forms/{pk}/form.xml and /forms/{pk}/xformsManifest, which let a page ask for all at once.
export function fillUrl(baseUrl: string, formId: number): string {
  return `${baseUrl}/forms/${formId}/fill`;
}

export function previewUrl(baseUrl: string, formId: number): string {
  return `${baseUrl}/forms/${formId}/preview`;
}

export function singleSubmitUrl(baseUrl: string, formId: number): string {
  return `${baseUrl}/forms/${formId}/single`;
}

/** The preview of an unpublished survey_preview draft (its XForm needs no credentials, as in onadata). */
export function draftPreviewUrl(baseUrl: string, username: string, uniqueString: string): string {
  return `${baseUrl}/forms/preview?username=${encodeURIComponent(username)}&filename=${encodeURIComponent(uniqueString)}`;
}

export function editUrl(baseUrl: string, formId: number, recordId: number, returnUrl?: string): string {
  const query = returnUrl ? `?return_url=${encodeURIComponent(returnUrl)}` : '';
  return `${baseUrl}/forms/${formId}/records/${recordId}/edit${query}`;
}

/** The pages' routes in Fastify's syntax (src/http/web-app.ts answers webform.html for each). */
export const WEB_FORM_PAGES = ['/forms/preview', '/forms/:pk/fill', '/forms/:pk/preview', '/forms/:pk/single', '/forms/:pk/records/:dataid/edit'] as const;
