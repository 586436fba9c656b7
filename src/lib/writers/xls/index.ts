export { xlsChunks, xlsOnePassChunks, XLS_LIMITS, type XlsOptions } from './xls-writer.ts';
export { memorySpool, type Spool, type SpoolFactory } from './spool.ts';
