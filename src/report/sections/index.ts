// The section registry, in page order. A new analysis adds a module beside these and one entry
// here; no other section changes.
import type { Section } from '../section.js';
import { summary } from './summary.js';
import { advice } from './advice.js';
import { slow } from './slow.js';
import { timeline } from './timeline.js';
import { critical } from './critical.js';
import { blame } from './blame.js';
import { histograms } from './histograms.js';
import { patterns } from './patterns.js';
import { balance } from './balance.js';

export const SECTIONS: readonly Section[] = [summary, advice, slow, timeline, critical, blame, patterns, histograms, balance];
