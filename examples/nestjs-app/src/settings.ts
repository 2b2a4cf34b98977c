/**
 * The demo's znode paths and timings. The report job's interval is read when the class is
 * defined (a decorator argument), so it comes from the environment: REPORT_EVERY_MS.
 */

/** The election the report job's instances stand in. */
export const REPORT_ELECTION = '/nestjs-demo/election/report';

/** The lock every restock takes, whichever instance serves the request. */
export const INVENTORY_LOCK = '/nestjs-demo/locks/inventory';

/** How often every instance schedules the report job (only the leader runs it). */
export const REPORT_EVERY_MS = Number(process.env.REPORT_EVERY_MS ?? 500);

/** How long a restock holds the inventory lock. */
export const RESTOCK_MS = Number(process.env.RESTOCK_MS ?? 60);
