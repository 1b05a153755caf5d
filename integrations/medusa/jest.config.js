// Unit tests (src/**/__tests__) need nothing running; the integration tests
// (integration-tests/) start Medusa on PostgreSQL against a running app, as
// tests/medusa/medusa_test.go in the repository does.
const transform = {
  "^.+\\.[jt]s$": ["@swc/jest", { jsc: { parser: { syntax: "typescript", decorators: true }, target: "es2021" } }],
}

module.exports = {
  projects: [
    {
      displayName: "unit",
      testEnvironment: "node",
      transform,
      testMatch: ["<rootDir>/src/**/__tests__/**/*.spec.ts"],
    },
    {
      displayName: "integration",
      testEnvironment: "node",
      transform,
      testMatch: ["<rootDir>/integration-tests/**/*.spec.ts"],
      setupFiles: ["<rootDir>/integration-tests/loopback.js"],
      modulePathIgnorePatterns: ["<rootDir>/dist/", "<rootDir>/.medusa/"],
    },
  ],
}
