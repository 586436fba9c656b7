// undici's Agent module on its own (src/platform/remote-fetch.ts): the package has no exports map,
// so the file is importable, but its types are declared only for the package's entry.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentModule: typeof Agent;
  export default AgentModule;
}
