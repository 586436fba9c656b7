// @getodk/web-forms 0.22.0 names dist/index.d.ts in its exports but does not ship it: what this
// app uses of it, as its README and component describe it.
declare module '@getodk/web-forms' {
  import type { Component, Plugin } from 'vue';

  /** A submission as the form hands it over: the instance XML and the files its answers name. */
  export interface InstanceData {
    readonly instanceFile: File;
    readonly attachments: readonly File[];
  }

  export interface MonolithicInstancePayload {
    readonly status: 'ready' | 'pending' | 'max-size-exceeded';
    readonly data: readonly [InstanceData];
  }

  export interface EditInstanceOptions {
    resolveInstance(): Promise<string | Blob | Response>;
    readonly attachmentFileNames: readonly string[];
    resolveAttachment(fileName: string): Promise<Response>;
  }

  export const POST_SUBMIT__NEW_INSTANCE: unique symbol;
  export type HostSubmissionResult = { readonly next?: typeof POST_SUBMIT__NEW_INSTANCE };
  export type HostSubmissionResultCallback = (result: HostSubmissionResult | Promise<HostSubmissionResult>) => void;

  export const OdkWebForm: Component;
  export const webFormsPlugin: Plugin;
}
