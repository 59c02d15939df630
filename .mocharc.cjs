// Tests run against the compiled output (npm test builds first) on real PostgreSQL and Redis.
module.exports = {
  spec: ['dist/test/**/*.test.js'],
  require: ['dist/test/setup.js'],
  'node-option': ['no-node-snapshot'],
  timeout: 30000,
  'forbid-only': Boolean(process.env.CI),
  exit: true,
};
