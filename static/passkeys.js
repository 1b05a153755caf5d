// The console's passkeys: the browser's WebAuthn makes them and signs in
// with them, and this script carries its options and answers to the
// server as JSON. Without WebAuthn (no script, an old browser) nothing here
// runs: the pages keep their controls hidden and say what a passkey needs,
// and sign-in by password works as before.
(() => {
  if (!window.PublicKeyCredential || !navigator.credentials) {
    for (const help of document.querySelectorAll("[data-passkey-help][data-unsupported]")) {
      help.textContent = help.dataset.unsupported;
    }
    return;
  }

  const bytes = (text) => {
    const b64 = text.replace(/-/g, "+").replace(/_/g, "/");
    const raw = atob(b64 + "===".slice((b64.length + 3) % 4));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0)).buffer;
  };
  const text = (buffer) => {
    if (!buffer) return null;
    let raw = "";
    for (const b of new Uint8Array(buffer)) raw += String.fromCharCode(b);
    return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  };

  // The server's options, with their binary fields made bytes again.
  const creationOptions = (o) => ({
    ...o,
    challenge: bytes(o.challenge),
    user: { ...o.user, id: bytes(o.user.id) },
    excludeCredentials: (o.excludeCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
  });
  const requestOptions = (o) => ({
    ...o,
    challenge: bytes(o.challenge),
    allowCredentials: (o.allowCredentials || []).map((c) => ({ ...c, id: bytes(c.id) })),
  });

  // A credential as JSON, as the server reads it, with its response's
  // fields (a new credential's, or an assertion's).
  const asJSON = (c, response) => ({
    id: c.id,
    rawId: text(c.rawId),
    type: c.type,
    authenticatorAttachment: c.authenticatorAttachment || undefined,
    clientExtensionResults: c.getClientExtensionResults(),
    response: { clientDataJSON: text(c.response.clientDataJSON), ...response },
  });
  const made = (c) =>
    asJSON(c, {
      attestationObject: text(c.response.attestationObject),
      transports: c.response.getTransports ? c.response.getTransports() : [],
    });
  const asserted = (c) =>
    asJSON(c, {
      authenticatorData: text(c.response.authenticatorData),
      signature: text(c.response.signature),
      userHandle: text(c.response.userHandle),
    });

  // refusal is an answer the server gave with its reason.
  class Refusal extends Error {
    constructor(message, field) {
      super(message);
      this.field = field;
    }
  }

  // send POSTs fields (a form's) or a JSON body with the CSRF token, and
  // reads the JSON answer; a refusal carries the server's words.
  const send = async (url, csrf, body) => {
    const init = { method: "POST", credentials: "same-origin", headers: { "X-CSRF-Token": csrf, Accept: "application/json" } };
    if (body instanceof URLSearchParams) {
      body.set("csrf", csrf);
      init.body = body;
    } else {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    let answer = null;
    try {
      answer = await response.json();
    } catch {
      // Not JSON: an error page.
    }
    if (!response.ok || !answer) throw new Refusal(answer && answer.error, answer && answer.field);
    return answer;
  };

  // say shows what went wrong where the person looks: the server's words,
  // or the page's own for a cancelled or failed ceremony.
  const say = (place, box, error) => {
    const out = place.querySelector("[data-passkey-error]");
    if (!out) return;
    if (error instanceof Refusal && error.message) out.textContent = error.message;
    else if (error && (error.name === "NotAllowedError" || error.name === "AbortError")) out.textContent = box.dataset.cancelled;
    else out.textContent = box.dataset.failed;
    if (error instanceof Refusal && error.field) {
      const field = place.querySelector("[data-testid='" + error.field + "']");
      if (field) {
        field.setAttribute("aria-invalid", "true");
        field.focus();
      }
    }
  };

  const proveWithPasskey = async (csrf, except) => {
    const fields = new URLSearchParams({ proof: "passkey" });
    if (except) fields.set("except", except);
    const options = await send("/console/account/passkeys/begin", csrf, fields);
    const credential = await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
    return JSON.stringify(asserted(credential));
  };

  // Signing in: the sign-in page (any passkey, and the browser's autofill
  // where it offers passkeys) and the second step (the person's own).
  for (const box of document.querySelectorAll("[data-passkey-signin]")) {
    const button = box.querySelector("[data-passkey-button]");
    const help = box.querySelector("[data-passkey-help]");
    if (!button) continue;
    button.hidden = false;
    if (help && help.dataset.ready) help.textContent = help.dataset.ready;
    else if (help) help.hidden = true;
    let waiting = null;
    const signIn = async (mediation) => {
      if (waiting) waiting.abort();
      const controller = new AbortController();
      waiting = controller;
      const fields = new URLSearchParams();
      if (box.dataset.next) fields.set("next", box.dataset.next);
      const options = await send("/console/login/passkey/begin", box.dataset.csrf, fields);
      const request = { publicKey: requestOptions(options.publicKey), signal: controller.signal };
      if (mediation) request.mediation = mediation;
      const credential = await navigator.credentials.get(request);
      const answer = await send("/console/login/passkey", box.dataset.csrf, asserted(credential));
      location.assign(answer.redirect);
    };
    button.addEventListener("click", () => {
      box.querySelector("[data-passkey-error]").textContent = "";
      signIn(null).catch((error) => say(box, box, error));
    });
    if ("conditional" in box.dataset && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then((yes) => {
        if (!yes) return;
        signIn("conditional").catch((error) => {
          // Aborted by the button, or nothing chosen: the page stays as
          // it is.
          if (error && error.name !== "AbortError" && error.name !== "NotAllowedError") say(box, box, error);
        });
      });
    }
  }

  // Adding a passkey on the account page: the person's password (or
  // another passkey of theirs) and a name, then the browser makes it.
  for (const form of document.querySelectorAll("[data-passkey-add]")) {
    const help = form.parentElement.querySelector("[data-passkey-help]");
    form.hidden = false;
    if (help) help.hidden = true;
    const name = form.querySelector("[data-testid='passkey-name']");
    const password = form.querySelector("[data-testid='passkey-password']");
    const add = async (proof) => {
      const fields = new URLSearchParams({ name: name.value });
      if (proof) fields.set("assertion", proof);
      else fields.set("passkey_password", password.value);
      const options = await send("/console/account/passkeys/begin", form.dataset.csrf, fields);
      const credential = await navigator.credentials.create({ publicKey: creationOptions(options.publicKey) });
      const answer = await send("/console/account/passkeys", form.dataset.csrf, { name: name.value, credential: made(credential) });
      location.assign(answer.redirect);
    };
    const start = () => {
      form.querySelector("[data-passkey-error]").textContent = "";
      for (const field of form.querySelectorAll("[aria-invalid]")) field.removeAttribute("aria-invalid");
    };
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      start();
      add(null).catch((error) => say(form, form, error));
    });
    const other = form.querySelector("[data-passkey-proof]");
    if (other) {
      other.addEventListener("click", () => {
        start();
        proveWithPasskey(form.dataset.csrf, "")
          .then((proof) => add(proof))
          .catch((error) => say(form, form, error));
      });
    }
  }

  // Removing a passkey: another of the person's passkeys instead of their
  // password.
  for (const form of document.querySelectorAll("[data-passkey-proof-form]")) {
    const other = form.querySelector("[data-passkey-proof]");
    if (!other) continue;
    other.hidden = false;
    other.addEventListener("click", () => {
      form.querySelector("[data-passkey-error]").textContent = "";
      proveWithPasskey(form.dataset.csrf, form.dataset.except)
        .then((proof) => {
          form.querySelector("input[name='assertion']").value = proof;
          form.submit();
        })
        .catch((error) => say(form, form, error));
    });
  }
})();
