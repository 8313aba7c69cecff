/**
 * `@paddock/policy/testing`: the golden-fixture kit for apps' contract tests. Kept out of the
 * core entry because it reads files.
 */
export {
  loadGoldenFixtures,
  decideFixture,
  compareWithFixture,
  containsSubset,
  capabilitiesOf,
  FIXTURES_DIR,
  type GoldenFixture,
  type FixtureDecision,
  type FixtureKind,
  type ExpectedViolation,
} from './fixtures';
