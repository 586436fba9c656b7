import { createApp } from 'vue';
import App from './App.vue';
import { onSignedOut } from './api.ts';
import { paths } from './paths.ts';
import { router } from './router.ts';
import { sessionEnded } from './session.ts';
import './styles.css';

// A session that ended elsewhere sends the person to sign in, and back here afterwards.
onSignedOut(() => {
  sessionEnded();
  const here = router.currentRoute.value;
  if (!here.meta['public']) void router.push({ path: paths.signIn, query: { next: here.fullPath } });
});

createApp(App).use(router).mount('#app');
