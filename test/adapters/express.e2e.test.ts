import { describeServerKind } from './e2e.js';

describeServerKind('express');
