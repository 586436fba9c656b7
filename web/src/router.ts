// The app's pages. Pages other than sign-in and registration need a session; each page's code is
// loaded when it is first opened.
import { nextTick } from 'vue';
import { createRouter, createWebHistory, type RouteLocationNormalized } from 'vue-router';
import { paths } from './paths.ts';
import { loadSession, session } from './session.ts';

export const router = createRouter({
  history: createWebHistory(),
  routes: [
    { path: paths.home, redirect: paths.projects },
    { path: paths.signIn, name: 'sign-in', component: () => import('./pages/SignInPage.vue'), meta: { title: 'Sign in', public: true } },
    { path: paths.register, name: 'register', component: () => import('./pages/RegisterPage.vue'), meta: { title: 'Create an account', public: true } },
    { path: paths.projects, name: 'projects', component: () => import('./pages/ProjectsPage.vue'), meta: { title: 'Projects' } },
    { path: paths.project, name: 'project', component: () => import('./pages/ProjectPage.vue'), meta: { title: 'Project' } },
    { path: paths.account, name: 'account', component: () => import('./pages/account/AccountPage.vue'), meta: { title: 'Account' } },
    { path: paths.orgs, name: 'orgs', component: () => import('./pages/orgs/OrgsPage.vue'), meta: { title: 'Organisations' } },
    { path: paths.org, name: 'org', component: () => import('./pages/orgs/OrgPage.vue'), meta: { title: 'Organisation' } },
    { path: paths.formExports, name: 'form-exports', component: () => import('./pages/exports/FormExportsPage.vue'), meta: { title: 'Exports' } },
    { path: paths.formImports, name: 'form-imports', component: () => import('./pages/exports/FormImportsPage.vue'), meta: { title: 'Imports' } },
    { path: paths.form, name: 'form', component: () => import('./pages/forms/FormPage.vue'), meta: { title: 'Form' } },
    { path: paths.formData, name: 'form-data', component: () => import('./pages/data/FormDataPage.vue'), meta: { title: 'Records' } },
    { path: paths.formRecord, name: 'form-record', component: () => import('./pages/data/RecordPage.vue'), meta: { title: 'Record' } },
    { path: paths.formMap, name: 'form-map', component: () => import('./pages/data/FormMapPage.vue'), meta: { title: 'Map' } },
    { path: paths.formSummary, name: 'form-summary', component: () => import('./pages/data/FormSummaryPage.vue'), meta: { title: 'Summary' } },
    { path: '/:rest(.*)*', name: 'not-found', component: () => import('./pages/NotFoundPage.vue'), meta: { title: 'Page not found', public: true } },
  ],
});

/** Only the app's own pages are places to return to after signing in. */
export function safeNext(next: unknown): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') ? next : paths.projects;
}

router.beforeEach(async (to: RouteLocationNormalized) => {
  try {
    await loadSession();
  } catch {
    // The page shows the server's unavailability when it calls the API itself.
    return true;
  }
  if (!to.meta['public'] && !session.user) return { path: paths.signIn, query: { next: to.fullPath } };
  if ((to.name === 'sign-in' || to.name === 'register') && session.user) return { path: paths.projects };
  return true;
});

// A screen reader hears the new page: the title changes and focus moves to its heading.
router.afterEach((to) => {
  const title = typeof to.meta['title'] === 'string' ? to.meta['title'] : '';
  document.title = title ? `${title} · Gather` : 'Gather';
  void nextTick(() => document.querySelector<HTMLElement>('main h1')?.focus({ preventScroll: true }));
});
