// The activity sets of Tandem's two kinds of worker. Workflows import these types only.
import type { createPolicyActivities } from './policy.js';
import type { createAgentTurnActivities } from './agentTurn.js';
import type { createEnvActivities } from './env.js';
import type { createPublishActivities } from './publish.js';
import type { createUpdateGroupActivities } from './updateGroups.js';
import type { createUpdateActivities } from './updatePolicy.js';

/** Activities of the CPU worker (task queue `tandem-cpu`). */
export type CpuActivities = ReturnType<typeof createEnvActivities> & ReturnType<typeof createPublishActivities> & ReturnType<typeof createUpdateGroupActivities>;

/** Activities of a policy worker (task queue per worker, e.g. `tandem-policy-0`). */
export type PolicyActivities = ReturnType<typeof createPolicyActivities> & ReturnType<typeof createAgentTurnActivities> & ReturnType<typeof createUpdateActivities>;
