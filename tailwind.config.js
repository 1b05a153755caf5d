/** Tailwind reads the templ views and the scripts (the console's views, with
 * the shared kit's form pieces of views/fields.templ, are built into
 * static/console.css apart, by package.json, so that shoppers never
 * download them); theme values come from CSS
 * custom properties set once in static/input.css (and by a merchant's theme),
 * so the classes never hard-code a colour. */
module.exports = {
  content: ["./views/**/*.templ", "!./views/console/**", "./static/*.js"],
  theme: {
    extend: {
      colors: {
        primary: "var(--color-primary)",
        "on-primary": "var(--color-on-primary)",
        accent: "var(--color-accent)",
        page: "var(--color-bg)",
        "page-ink": "var(--color-page-ink)",
        "page-muted": "var(--color-page-muted)",
        card: "var(--color-card)",
        ink: "var(--color-ink)",
        muted: "var(--color-muted)",
        line: "var(--color-line)",
        danger: "var(--color-danger)",
      },
      borderRadius: {
        theme: "var(--radius)",
      },
      spacing: {
        gap: "var(--space)",
      },
    },
  },
  plugins: [],
};
