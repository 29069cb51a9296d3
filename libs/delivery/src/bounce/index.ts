export * from './report-parser';
