// Values the format itself fixes, shared by the dictionary and the case writers.

/** The system-missing value: the most negative double. */
export const SYSMIS = -Number.MAX_VALUE;
/** Compression bias: command bytes 1…251 stand for the integers 1 − bias … 251 − bias. */
export const COMPRESSION_BIAS = 100;
/** Where the header's int32 case count sits, for writers that can seek back and fill it in. */
export const CASE_COUNT_OFFSET = 80;
