export { version } from '../core/version.js';
