/**
 * The embedded mode's coordination: one server processes a data directory
 * (its worker threads work for it), so the one shard is always its own,
 * the lease is never lost and the fence is always 0.
 */
import type { Coordinator, Fence, Shard } from '../types.js';

export class LocalCoordinator implements Coordinator {
  owned(): readonly Shard[] {
    return [0];
  }

  async lock(): Promise<Fence> {
    return 0;
  }

  async renew(): Promise<boolean> {
    return true;
  }

  async release(): Promise<void> {}

  async leaseOf(): Promise<Fence> {
    return 0;
  }

  onChange(): () => void {
    return () => {};
  }
}
