export { createSavWriter, savCaseCountPatch, savCasePieces, savChunks, savRowEncoder, type SavCasePieces, DEFAULT_STRING_WIDTH, type SavRowEncoder, type SavWriter } from './sav-writer.ts';
export { spssDateFromIso, spssDateTimeFromIso, spssTimeFromIso, spssDateTimeFromDate, type SpssZone } from './dates.ts';
export { uniqueSpssNames, validSpssName } from './names.ts';
export type { SavCaseOut, SavCasePieceRow, SavWrittenRow, SavCell, SavMeasure, SavNumericFormat, SavRow, SavValueLabel, SavVariable, SavWriterOptions } from './types.ts';
