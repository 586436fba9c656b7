// undici's Agent and connector modules on their own (src/platform/remote-fetch.ts): the package
// has no exports map, so the files are importable, but their types are declared only for the
// package's entry.
declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentModule: typeof Agent;
  export default AgentModule;
}

declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';

  const connectModule: typeof buildConnector;
  export default connectModule;
}
