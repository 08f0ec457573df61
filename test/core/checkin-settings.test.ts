import { describe, expect, it } from "vitest";
import { formatQuietHours, parseQuietHours } from "../../src/core/checkin-settings.ts";

describe("quiet hours", () => {
  it("parses and renders HH:MM-HH:MM, including ranges over midnight", () => {
    expect(parseQuietHours("22:00-08:00")).toEqual({ start: 1320, end: 480 });
    expect(formatQuietHours({ start: 1320, end: 480 })).toBe("22:00-08:00");
    for (const bad of ["22-08", "24:00-08:00", "22:00", "22:00-08:00-09:00", ""]) {
      expect(parseQuietHours(bad)).toBeNull();
    }
  });
});
