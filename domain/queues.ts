// The task queues' names, one home for each. Pure: workflows and configs import it.
//   tandem-cpu        the CPU worker: every workflow, env steps and rewards, publishing, scripted players
//   tandem-policy-0   a policy worker's, unless placement.<base>.task_queue names another
//                     (its replicas' update queues are <queue>-r<rank>: policy/spec.ts replicaQueue)

/** The CPU worker's task queue. */
export const CPU_QUEUE = 'tandem-cpu';

/** The policy worker's task queue by default (placement.<base>.task_queue, TANDEM_POLICY_QUEUE). */
export const DEFAULT_POLICY_QUEUE = 'tandem-policy-0';
