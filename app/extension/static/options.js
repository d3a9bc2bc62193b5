// The options page: edits pinchtab_url and pinchtab_pairing in chrome.storage.local; the service
// worker notices the change (chrome.storage.onChanged) and reconnects.
"use strict";

const DEFAULT_URL = "http://127.0.0.1:19222";
const form = document.getElementById("settings");
const status = document.getElementById("status");

async function load() {
  const s = await chrome.storage.local.get({ pinchtab_url: DEFAULT_URL, pinchtab_pairing: "" });
  form.url.value = s.pinchtab_url;
  form.pairing.value = s.pinchtab_pairing;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const url = form.url.value.trim().replace(/\/+$/, "") || DEFAULT_URL;
  await chrome.storage.local.set({ pinchtab_url: url, pinchtab_pairing: form.pairing.value.trim() });
  status.textContent = "Saved.";
});

load();
