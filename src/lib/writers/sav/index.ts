export { createSavWriter, savCaseCountPatch, savChunks, savRowEncoder, DEFAULT_STRING_WIDTH, type SavRowEncoder, type SavWriter } from './sav-writer.ts';
export { spssDateFromIso, spssDateTimeFromIso, spssTimeFromIso, spssDateTimeFromDate, type SpssZone } from './dates.ts';
export { uniqueSpssNames, validSpssName } from './names.ts';
export type { SavCaseOut, SavWrittenRow, SavCell, SavMeasure, SavNumericFormat, SavRow, SavValueLabel, SavVariable, SavWriterOptions } from './types.ts';
