// Who is signed in, as the server says (GET /api/v1/session); every page reads it from here.
import { reactive, readonly } from 'vue';
import { api, type User } from './api.ts';

const state = reactive({ user: null as User | null, registrationOpen: false, loaded: false });

export const session = readonly(state);

let loading: Promise<void> | undefined;

/** Asks the server once per page load (and again after signing in or out). */
export function loadSession(force = false): Promise<void> {
  if (!loading || force) {
    loading = api.session().then((answer) => {
      state.user = answer.user;
      state.registrationOpen = answer.registration_open;
      state.loaded = true;
    });
    // A failure (server down) is tried again on the next navigation.
    loading.catch(() => (loading = undefined));
  }
  return loading;
}

export async function signIn(username: string, password: string): Promise<void> {
  const answer = await api.signIn(username, password);
  state.user = answer.user;
}

export async function signOut(): Promise<void> {
  await api.signOut();
  state.user = null;
  // A fresh CSRF token and the registration setting for the next sign-in.
  await loadSession(true);
}

/** A signed-out answer from the API (the session expired, or the password changed elsewhere). */
export function sessionEnded(): void {
  state.user = null;
}
