// A one-time secret's Copy button: shown only where this script runs
// (without it the value stays selectable as one word). It selects the
// value, ready for the keyboard's copy, then copies it where the browser
// allows and says so beside it, for every reader.
(() => {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const value = document.getElementById(button.dataset.copy);
    const said = document.getElementById(button.dataset.copy + "-copied");
    if (!value || !said) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      const range = document.createRange();
      range.selectNodeContents(value);
      const selection = getSelection();
      selection.removeAllRanges();
      selection.addRange(range);
      try {
        await navigator.clipboard.writeText(value.innerText.trim());
        said.textContent = button.dataset.copied;
      } catch {
        // No clipboard here (an insecure origin, a refusal): the value
        // stays selected.
      }
    });
  }
})();
