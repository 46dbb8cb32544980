/** The LMDB drivers over one environment: what Engine.open and each worker thread use. */
import { openStorage, type Storage } from '../../storage.js';
import type { Drivers } from '../types.js';
import { LocalCoordinator } from './coordinator.js';
import { SegmentIncomingLog } from './segment-log.js';
import { LmdbSeriesStore } from './series.js';

export interface LmdbDrivers extends Drivers {
  incoming: SegmentIncomingLog;
}

export function lmdbDrivers(storage: Storage, dataDir: string): LmdbDrivers {
  return { incoming: new SegmentIncomingLog(storage, dataDir), series: new LmdbSeriesStore(storage), coordinator: new LocalCoordinator() };
}

const threadDrivers = new Map<string, Drivers>();

/**
 * This thread's one set of drivers on `dataDir`, its environment opened on
 * first use (worker threads serve tasks for the server's directory).
 */
export function threadLmdbDrivers(dataDir: string): Drivers {
  let drivers = threadDrivers.get(dataDir);
  if (drivers === undefined) {
    drivers = lmdbDrivers(openStorage(dataDir), dataDir);
    threadDrivers.set(dataDir, drivers);
  }
  return drivers;
}
