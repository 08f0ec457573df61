import { nextFireTime } from "./src/heartbeat/schedule.ts";
import { isInQuietHours } from "./src/heartbeat/policy.ts";
const t = nextFireTime("7 * * * *", "UTC", new Date("2026-11-22T21:30:00.000Z"));
console.log(t, isInQuietHours(t!, "UTC", { start: 1320, end: 480 }));
