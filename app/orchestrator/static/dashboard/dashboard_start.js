// Dashboard: starts everything. Loaded last, once every other script has defined its part
// (see dashboard.js).
"use strict";

// --- start --------------------------------------------------------------------------------
let booted = false;
async function boot() {
  await refreshHealth();
  booted = true;
  await refreshInstances();
  refreshProfiles();
  refreshAgentSessions();
  refreshActivity();
  connectEvents();
  refreshDebugSessions();
  setInterval(refreshDebugSessions, DEBUG_EVERY_MS);
  setInterval(refreshAgentSessions, INSTANCES_EVERY_MS * 3);
  setInterval(refreshProfiles, INSTANCES_EVERY_MS * 3);
  setInterval(refreshActivity, INSTANCES_EVERY_MS * 2);
  setInterval(refreshHealth, HEALTH_EVERY_MS);
  setInterval(refreshInstances, INSTANCES_EVERY_MS);
  setInterval(refreshTabs, SHOTS_EVERY_MS);
  refreshTabs();
}
boot();
