// The debug store: a cart in a Zustand store, rendered by hand, wired to a debug session.
//   index.html?session=demo&port=4000   joins session "demo" of the server on localhost:4000
//   (&host=127.0.0.1 for another host, &sdk=npm for the npm SDK instead of ours).
import { createStore } from "./vendor/zustand-vanilla.js";

const PRODUCTS = { apple: { name: "Apple", price: 0.5 }, pear: { name: "Pear", price: 0.8 }, fig: { name: "Fig", price: 1.2 } };
const COUPONS = { HALF: 0.5, TENOFF: 0.9 };

function saved() {
  try {
    return JSON.parse(sessionStorage.getItem("debug-store") || "null") || {};
  } catch {
    return {};
  }
}

export const useStore = createStore((set) => ({
  items: {},            // product id -> quantity
  coupon: null,
  ...saved(),           // a reload keeps the cart
  add: (id) => set((s) => ({ items: { ...s.items, [id]: (s.items[id] || 0) + 1 } })),
  remove: (id) => set((s) => {
    const items = { ...s.items };
    if (--items[id] <= 0) delete items[id];
    return { items };
  }),
  applyCoupon: (code) => {
    if (!(code in COUPONS)) throw new Error(`unknown coupon ${JSON.stringify(code)}`);
    set({ coupon: code });
  },
  clear: () => set({ items: {}, coupon: null }),
}));

export function total({ items, coupon }) {
  const sum = Object.entries(items).reduce((t, [id, n]) => t + PRODUCTS[id].price * n, 0);
  return sum * (coupon ? COUPONS[coupon] : 1);
}

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

function render(state) {
  const cart = $("cart");
  cart.replaceChildren(...Object.entries(state.items).map(([id, n]) => {
    const li = document.createElement("li");
    li.textContent = `${PRODUCTS[id].name} × ${n}`;
    const remove = document.createElement("button");
    remove.dataset.testid = `remove-${id}`;
    remove.textContent = `Remove ${id}`;
    remove.onclick = () => state.remove(id);
    li.append(remove);
    return li;
  }));
  $("cart-count").textContent = String(Object.values(state.items).reduce((a, b) => a + b, 0));
  $("cart-total").textContent = total(state).toFixed(2);
}

for (const id of Object.keys(PRODUCTS)) $(`add-${id}`).onclick = () => useStore.getState().add(id);
$("clear-cart").onclick = () => useStore.getState().clear();
$("apply-coupon").onclick = () => {
  const code = $("coupon").value.trim();
  console.info("applying coupon", code);
  useStore.getState().applyCoupon(code);   // an unknown code throws: the agent sees the error
};
useStore.subscribe((state) => {
  sessionStorage.setItem("debug-store", JSON.stringify({ items: state.items, coupon: state.coupon }));
  render(state);
});
render(useStore.getState());

// --- the debug session

async function loadSdk(q) {
  if (q.get("sdk") === "npm") return (await import("debug-bridge-browser")).createDebugBridge;
  const base = `http://${q.get("host") || "localhost"}:${q.get("port") || "4000"}`;
  await new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = `${base}/debug/sdk.js`;
    script.dataset.autostart = "false";
    script.onload = resolve;
    script.onerror = () => reject(new Error(`no debug SDK at ${script.src}`));
    document.head.append(script);
  });
  return window.PinchtabDebug.createDebugBridge;
}

async function connect() {
  const q = new URLSearchParams(location.search);
  const session = q.get("session");
  if (!session) return;
  const createDebugBridge = await loadSdk(q);
  const host = q.get("host") || "localhost", port = q.get("port") || "4000";
  const bridge = createDebugBridge({
    url: `ws://${host}:${port}/debug?role=app&sessionId=${encodeURIComponent(session)}`,
    sessionId: session,
    appName: "debug-store",
    appVersion: "1.0.0",
    getCustomState: () => ({ store: useStore.getState() }),
    onConnect: () => { $("status").textContent = `in debug session ${session}`; },
    onDisconnect: () => { $("status").textContent = "debug session lost; reconnecting"; },
  });
  // Every change of the store reaches the agents as it happens.
  useStore.subscribe((state) => bridge.sendState("store", state));
  bridge.connect();
  window.debugBridge = bridge;
}

connect().catch((e) => console.error("debug bridge:", e.message));
