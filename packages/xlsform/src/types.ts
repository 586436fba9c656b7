export interface ConvertOptions {
  fileName: string;
  /** Root element name of the primary instance; 'data' by default. */
  rootName?: string;
}

export interface ConversionIssue {
  code: string;
  message: string;
  sheet?: string;
  row?: number;
  column?: string;
}

export interface ConvertSuccess {
  ok: true;
  xform: string;
  formJson: Record<string, unknown>;
  itemsetsCsv?: string;
  warnings: string[];
  idString: string;
  title: string;
  version?: string;
  defaultLanguage: string;
  publicKey?: string;
  submissionUrl?: string;
  instanceName?: string;
}

export interface ConvertFailure {
  ok: false;
  errors: ConversionIssue[];
}

/** The dict-shaped data pyxform passes between its stages, and the form JSON. */
export type Json = string | number | boolean | null | Json[] | JsonObject;
export interface JsonObject {
  [key: string]: Json;
}
