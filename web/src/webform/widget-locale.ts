// ODK Web Forms 0.22's widgets are PrimeVue's, installed by its plugin with PrimeVue's English
// locale; the engine itself takes no locale. PrimeVue reads its words, month and day names, first
// day of the week and date format from `$primevue.config.locale`, which stays open to the app:
// here they follow the browser (names, week and date order from Intl in the browser's own
// language; the few words from this page's catalogue). When the plugin changes, nothing happens.
import type { App } from 'vue';
import type { Messages } from './messages.ts';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function names(locale: string, count: number, at: (index: number) => Date, options: Intl.DateTimeFormatOptions): string[] {
  const format = new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' });
  return Array.from({ length: count }, (_, index) => format.format(at(index)));
}

/** 0 for Sunday … 6 for Saturday, as PrimeVue counts; Intl counts Monday as 1 and Sunday as 7. */
function firstDayOfWeek(locale: string): number | undefined {
  try {
    const tag = new Intl.Locale(locale).maximize() as Intl.Locale & { getWeekInfo?: () => { firstDay: number }; weekInfo?: { firstDay: number } };
    const first = tag.getWeekInfo?.().firstDay ?? tag.weekInfo?.firstDay;
    return first === undefined ? undefined : first % 7;
  } catch {
    return undefined;
  }
}

/** The date's order as PrimeVue writes it (dd/mm/yy, mm/dd/yy, yy-mm-dd; its `yy` is four digits). */
function dateFormat(locale: string): string {
  const parts = new Intl.DateTimeFormat(locale, { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: 'UTC' }).formatToParts(new Date(Date.UTC(2024, 10, 28)));
  return parts
    .map((part) => (part.type === 'day' ? 'dd' : part.type === 'month' ? 'mm' : part.type === 'year' ? 'yy' : part.value.replace(/[a-z]/gi, '')))
    .join('')
    .replace(/[^a-z]+$/i, '');
}

export function localizeWidgets(app: App, locale: string, words: Messages['widgets']): void {
  try {
    const primevue: unknown = app.config.globalProperties['$primevue'];
    const config = isRecord(primevue) ? primevue['config'] : undefined;
    const current = isRecord(config) ? config['locale'] : undefined;
    if (!isRecord(config) || !isRecord(current)) return;
    // 7 January 2024 was a Sunday.
    const day = (index: number): Date => new Date(Date.UTC(2024, 0, 7 + index));
    const month = (index: number): Date => new Date(Date.UTC(2024, index, 15));
    const dayNamesShort = names(locale, 7, day, { weekday: 'short' });
    const aria = isRecord(current['aria']) ? current['aria'] : {};
    config['locale'] = {
      ...current,
      dayNames: names(locale, 7, day, { weekday: 'long' }),
      dayNamesShort,
      dayNamesMin: dayNamesShort.map((name) => name.replace(/\.$/, '').slice(0, 2)),
      monthNames: names(locale, 12, month, { month: 'long' }),
      monthNamesShort: names(locale, 12, month, { month: 'short' }),
      firstDayOfWeek: firstDayOfWeek(locale) ?? current['firstDayOfWeek'],
      dateFormat: dateFormat(locale),
      today: words.today,
      clear: words.clear,
      chooseYear: words.chooseYear,
      chooseMonth: words.chooseMonth,
      chooseDate: words.chooseDate,
      prevMonth: words.prevMonth,
      nextMonth: words.nextMonth,
      prevYear: words.prevYear,
      nextYear: words.nextYear,
      prevDecade: words.prevDecade,
      nextDecade: words.nextDecade,
      emptyMessage: words.noOptions,
      emptyFilterMessage: words.noResults,
      emptySearchMessage: words.noResults,
      aria: { ...aria, close: words.close },
    };
  } catch {
    // PrimeVue's English stays.
  }
}
