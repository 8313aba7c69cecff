import { paddockVitest } from '../../vitest.shared.mts';
export default paddockVitest();
